package bench

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// The bench prints every line it promises, each with a ratio, on a small
// table (times themselves are not asserted).
func TestRunPrintsEveryLine(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), &out, Options{Dir: t.TempDir(), Rows: 2000, PerRound: 8, Rounds: 1, AuditSync: "normal"}); err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	for _, w := range []string{"audit.sync normal", "COUNT straight to SQLite", "exact, in process", "× raw", "over the wire (simple protocol)", "cellkey / exact, in process",
		"× in process", "8 wire client(s) at once", "cellkey, in process", "noise-remover statements, cellkey, over the wire", "laplace, in process",
		"laplace, bounded per person: GROUP BY / exact"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("bench output lacks %q:\n%s", w, out.String())
		}
	}
}

func TestCheckRefusesEmptySizes(t *testing.T) {
	tests := []struct {
		o  Options
		ok bool
	}{
		{Options{Rows: 1, PerRound: 1, Rounds: 1}, true},
		{Options{Rows: 0, PerRound: 1, Rounds: 1}, false},
		{Options{Rows: 1, PerRound: 0, Rounds: 1}, false},
		{Options{Rows: 1, PerRound: 1, Rounds: 0}, false},
		{Options{Rows: 1, PerRound: 1, Rounds: 1, AuditSync: "normal"}, true},
		{Options{Rows: 1, PerRound: 1, Rounds: 1, AuditSync: "FULL"}, true},
		{Options{Rows: 1, PerRound: 1, Rounds: 1, AuditSync: "off"}, false},
	}
	for _, tt := range tests {
		if err := tt.o.Check(); (err == nil) != tt.ok {
			t.Errorf("%+v: Check = %v", tt.o, err)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://bench:s3cret@localhost:5432/census?sslmode=disable", "postgres://bench@localhost:5432/census"},
		{"postgresql://localhost/census", "postgresql://localhost/census"},
	} {
		if got := redactURL(tc.in); got != tc.want {
			t.Errorf("redactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !isPostgresURL(tc.in) {
			t.Errorf("isPostgresURL(%q) = false", tc.in)
		}
	}
	if err := RunPostgres(context.Background(), io.Discard, PostgresOptions{Store: "people.db", State: "postgres://x/y"}); err == nil || !strings.Contains(err.Error(), "postgres:// URLs") {
		t.Errorf("RunPostgres with a file store: %v", err)
	}
}
