package proxy

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"countwall/dataset"
)

// benchQuery is the COUNT the benchmarks answer, protected and raw.
const benchQuery = "SELECT COUNT(*) FROM people WHERE age BETWEEN 30 AND 49 AND sex = 'F'"

// benchFixture generates a 100,000-row people table once per benchmark.
func benchFixture(b *testing.B) *fixture {
	b.Helper()
	dir := b.TempDir()
	f := &fixture{dir: dir, database: filepath.Join(dir, "people.db"), state: filepath.Join(dir, "state.db")}
	if err := dataset.GeneratePeople(context.Background(), f.database, dataset.PeopleOptions{Rows: 100_000, Seed: 1}, dataset.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkProtectedVsRaw compares a protected answer with the same COUNT
// sent straight to SQLite, in one run, so the ratio is what matters:
//
//	go test ./proxy -run '^$' -bench ProtectedVsRaw -count 6 | benchstat -
func BenchmarkProtectedVsRaw(b *testing.B) {
	f := benchFixture(b)
	b.Run("raw-sqlite", func(b *testing.B) {
		db, err := sql.Open("sqlite", "file:"+f.database+"?mode=ro")
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		for b.Loop() {
			var n int64
			if err := db.QueryRow("SELECT COUNT(*) FROM people WHERE age BETWEEN ? AND ? AND sex = ?", 30, 49, "F").Scan(&n); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, mech := range []struct {
		name   string
		params map[string]any
	}{
		{"exact", nil},
		{"cellkey", map[string]any{"ptable": "uniform", "d": 2}},
		{"laplace", nil},
	} {
		b.Run(mech.name, func(b *testing.B) {
			e := f.open(b, mech.name, mech.params)
			if mech.name == "laplace" {
				cfg := e.Config()
				cfg.Budget.EpsilonCap = 1e12
				if err := e.Reload(context.Background(), cfg); err != nil {
					b.Fatal(err)
				}
			}
			s := e.NewSession("bench")
			ctx := context.Background()
			for b.Loop() {
				if _, err := s.Exec(ctx, benchQuery, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
