package bench

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"countwall/attacks"
	"countwall/dataset"
)

// The bench prints every line it promises, each with a ratio, on a small
// table (times themselves are not asserted).
func TestRunPrintsEveryLine(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), &out, Options{Dir: t.TempDir(), Rows: 2000, PerRound: 8, Rounds: 1, AuditSync: "normal"}); err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	for _, w := range []string{"audit.sync normal", "COUNT straight to SQLite", "start: table read into memory", "long table, start: table read into memory", "exact, in process", "× raw", "over the wire (simple protocol)", "cellkey / exact, in process",
		"× in process", "8 wire client(s) at once", "cellkey, in process", "noise-remover statements, cellkey, over the wire", "laplace, in process",
		"laplace, bounded per person: GROUP BY / exact", "long table, laplace C=3: COUNT / exact", "long table, laplace C=3 G=8: GROUP BY / exact",
		"long table, Google's dpagg, C=3 (no firewall): COUNT", "gaussian, each charge alone, 1 wire client(s) at once",
		"gaussian, rho reserved, 32 wire client(s) at once", "× laplace (time)",
		"long table, laplace C=3: SUM(income), epsilon 1", "× faster than dpagg", "dpagg.BoundedSumFloat64, same rows", "RMSE"} {
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

// The library's line answers each bench statement with what SQLite computes
// for it: rows per person matching the WHERE, clipped at C, summed. At an
// epsilon of 1e9 the library's Laplace noise (scale 3e-9) rounds to zero.
func TestLibraryCountMatchesSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "long.db")
	if err := dataset.GeneratePeople(ctx, path, dataset.PeopleOptions{Rows: 400, Seed: 3, MaxRowsPerPerson: longMaxRows}, dataset.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f, err := openFrame(ctx, path, 1e9)
	if err != nil {
		t.Fatal(err)
	}
	if len(frameFilters) != len(benchQueries) {
		t.Fatalf("%d filters for %d statements", len(frameFilters), len(benchQueries))
	}
	for _, stmt := range benchQueries {
		where := "1"
		if i := strings.Index(stmt, " WHERE "); i >= 0 {
			where = stmt[i+len(" WHERE "):]
		}
		var want int64
		q := fmt.Sprintf("SELECT COALESCE(SUM(MIN(n, %d)), 0) FROM (SELECT id, COUNT(*) AS n FROM people WHERE %s GROUP BY id)", longRowsBound, where)
		if err := db.QueryRowContext(ctx, q).Scan(&want); err != nil {
			t.Fatal(err)
		}
		got, err := attacks.Count(ctx, f, stmt)
		if err != nil {
			t.Fatal(err)
		}
		if int64(got) != want {
			t.Errorf("%s: the library %v, SQLite %d", stmt, got, want)
		}
	}
}
