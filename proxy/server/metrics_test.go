package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"countwall/config"
)

// TestMetricsEndpoint serves with server.metrics_listen, runs answered,
// refused and catalog statements under laplace, scrapes /metrics, parses
// the exposition format and checks each family's value; and that no label
// other than the documented ones exists, so no statement text or answer
// can be carried.
func TestMetricsEndpoint(t *testing.T) {
	path := fixture(t)("laplace")
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	body = []byte(strings.Replace(string(body), "  listen: 127.0.0.1:0\n", "  listen: 127.0.0.1:0\n  metrics_listen: 127.0.0.1:0\n", 1))
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready, metricsReady := make(chan net.Addr, 1), make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, ServeOptions{Load: func() (*config.Config, error) { return config.Load(path, nil) },
			Logger: slog.New(slog.DiscardHandler), Ready: func(a net.Addr) { ready <- a }, MetricsReady: func(a net.Addr) { metricsReady <- a }})
	}()
	var addr, metricsAddr net.Addr
	for addr == nil || metricsAddr == nil {
		select {
		case addr = <-ready:
		case metricsAddr = <-metricsReady:
		case err := <-served:
			t.Fatalf("Serve ended: %v", err)
		}
	}
	conn, err := dial(t, addr.String(), "alice", "alice-secret")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, sql := range []string{
		"SELECT COUNT(*) FROM people WHERE age > 30",
		"SELECT COUNT(*) FROM people WHERE sex = 'F'",
		"SELECT * FROM people",
		"SELECT relname FROM pg_catalog.pg_class",
	} {
		rows, err := conn.Query(context.Background(), sql)
		if err == nil {
			for rows.Next() {
			}
			rows.Close()
		}
	}
	families := scrape(t, "http://"+metricsAddr.String()+"/metrics")

	checks := []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"countwall_statements_total", map[string]string{"kind": "query", "outcome": "answered", "sqlstate": "00000"}, 2},
		{"countwall_statements_total", map[string]string{"kind": "invalid", "outcome": "refused", "sqlstate": "0A000"}, 1},
		{"countwall_statements_total", map[string]string{"kind": "catalog", "outcome": "answered", "sqlstate": "00000"}, 1},
		{"countwall_answer_duration_seconds", map[string]string{"kind": "query"}, 2}, // the histogram's count
		{"countwall_sessions_open", nil, 1},
		{"countwall_logins_pending", nil, 0},
		{"countwall_logins_evicted_total", nil, 0},
		{"countwall_budget_spent", map[string]string{"analyst": "alice", "kind": "dp", "unit": "epsilon"}, 0.2},
		{"countwall_budget_spent", map[string]string{"analyst": "alice", "kind": "idp", "unit": "epsilon"}, 0},
		{"countwall_snapshot_state", map[string]string{"table": "people", "state": "memory"}, 1},
	}
	for _, c := range checks {
		got, ok := value(families[c.family], c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.family, c.labels, got, ok, c.want)
		}
	}
	allowed := map[string]bool{"kind": true, "outcome": true, "sqlstate": true, "analyst": true, "unit": true, "table": true, "state": true}
	for name, f := range families {
		if !strings.HasPrefix(name, "countwall_") {
			t.Errorf("unexpected family %s", name)
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !allowed[l.GetName()] {
					t.Errorf("%s has label %s=%q", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing the exposition format: %v\n%s", err, body)
	}
	return families
}

// value finds the metric of a family with exactly these labels: a
// counter's or gauge's value, a histogram's count.
func value(f *dto.MetricFamily, labels map[string]string) (float64, bool) {
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.GetLabel() {
			if labels[l.GetName()] != l.GetValue() {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}
