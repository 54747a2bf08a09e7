package server

import (
	"bytes"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"countwall/config"
)

// A reload's change to a setting serve reads once is named by its config
// key, with the value in force and the one in the file; the settings a
// reload applies are not.
func TestUnapplied(t *testing.T) {
	started := &config.Config{
		Server:    config.Server{Listen: "127.0.0.1:5433", MaxConnections: 64, QueryTimeout: 10 * time.Second},
		Monitor:   config.Monitor{MaxHistory: 100},
		Budget:    config.Budget{EpsilonCap: 1, Reserve: 1},
		Mechanism: config.Mechanism{Name: "laplace"},
	}
	tests := []struct {
		name   string
		change func(c *config.Config)
		want   []Unapplied
	}{
		{"nothing", func(*config.Config) {}, nil},
		{"what a reload applies", func(c *config.Config) { c.Mechanism.Name = "suppress"; c.Budget.EpsilonCap = 0.5 }, nil},
		{"listen", func(c *config.Config) { c.Server.Listen = "0.0.0.0:5433" }, []Unapplied{{"server.listen", "127.0.0.1:5433", "0.0.0.0:5433"}}},
		{"limits and timeouts", func(c *config.Config) { c.Server.MaxConnections = 8; c.Server.QueryTimeout = time.Second },
			[]Unapplied{{"server.max_connections", 64, 8}, {"server.query_timeout", 10 * time.Second, time.Second}}},
		{"monitor and reserve", func(c *config.Config) { c.Monitor.Every = time.Minute; c.Budget.Reserve = 1000 },
			[]Unapplied{{"monitor.every", time.Duration(0), time.Minute}, {"budget.reserve", 1, 1000}}},
	}
	for _, tt := range tests {
		next := *started
		tt.change(&next)
		if got := unapplied(started, &next); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
	var logs bytes.Buffer
	next := *started
	next.Server.Listen = "0.0.0.0:5433"
	warnUnapplied(slog.New(slog.NewTextHandler(&logs, nil)), started, &next)
	want := `level=WARN msg="config change not applied: it is read when serve starts; restart countwall to apply it" key=server.listen in_force=127.0.0.1:5433 in_file=0.0.0.0:5433`
	if !strings.HasSuffix(strings.TrimSpace(logs.String()), want) {
		t.Errorf("logged %q, want it to end %q", logs.String(), want)
	}
}
