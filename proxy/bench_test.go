package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync/atomic"
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
			// The audit row is written without waiting for the disk, so that
			// the lines compare computation (BenchmarkAnswerAudit measures
			// the disk).
			cfg := f.config(b, mech.name, mech.params)
			cfg.Budget.EpsilonCap = 1e12
			cfg.Audit.Sync = "normal"
			e, err := Open(context.Background(), cfg, Options{NoiseSeed: 1})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			s := e.NewSession("bench")
			ctx := context.Background()
			// The first query reads the table into memory; the loop measures
			// the answers that follow.
			if _, err := s.Exec(ctx, benchQuery, nil); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := s.Exec(ctx, benchQuery, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLaplaceOneAnalyst is the rate one analyst sustains under laplace
// on a small table, where the durable ledger charge dominates; reserve-10
// lets the ledger reserve ten queries' worth of budget per durable write.
func BenchmarkLaplaceOneAnalyst(b *testing.B) {
	for _, reserve := range []int{1, 10} {
		b.Run(fmt.Sprintf("reserve-%d", reserve), func(b *testing.B) {
			f := newFixture(b, 1000)
			cfg := f.config(b, "laplace", nil)
			cfg.Budget.EpsilonCap = 1e12
			cfg.Budget.Reserve = reserve
			e, err := Open(context.Background(), cfg, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			s := e.NewSession("bench")
			for b.Loop() {
				if _, err := s.Exec(context.Background(), "SELECT COUNT(*) FROM people WHERE sex = 'F'", nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAnswerAudit measures what a durable audit row per answer costs:
// "full" commits each answer's row to disk before the answer leaves (group
// commit: the answers waiting at that moment share one), "normal" writes it
// to the state's log without waiting for the disk (audit.sync: normal),
// "queued" is the audit as it was, written in batches after the answers
// left. On a
// 1,000-row table, so that the audit is a visible share; with one session
// and with 8 at once:
//
//	go test ./proxy -run '^$' -bench AnswerAudit
func BenchmarkAnswerAudit(b *testing.B) {
	f := newFixture(b, 1000)
	for _, mech := range []string{"exact", "laplace"} {
		for _, audit := range []string{"queued", "full", "normal"} {
			for _, sessions := range []int{1, 8} {
				b.Run(fmt.Sprintf("%s/%s/sessions-%d", mech, audit, sessions), func(b *testing.B) {
					cfg := f.config(b, mech, nil)
					cfg.State = filepath.Join(b.TempDir(), "state.db")
					cfg.Budget.EpsilonCap = 1e12
					if audit == "normal" {
						cfg.Audit.Sync = audit
					}
					e, err := Open(context.Background(), cfg, Options{})
					if err != nil {
						b.Fatal(err)
					}
					defer e.Close()
					e.queueAnswerAudit = audit == "queued"
					b.SetParallelism(sessions)
					b.ResetTimer()
					if sessions == 1 {
						s := e.NewSession("bench")
						for b.Loop() {
							if _, err := s.Exec(context.Background(), "SELECT COUNT(*) FROM people WHERE sex = 'F'", nil); err != nil {
								b.Fatal(err)
							}
						}
						return
					}
					// SetParallelism multiplies by GOMAXPROCS; each goroutine
					// is one session (one analyst each, so that they do not
					// queue on one analyst's ledger lock).
					var n atomic.Int64
					b.RunParallel(func(pb *testing.PB) {
						s := e.NewSession(fmt.Sprintf("bench-%d", n.Add(1)))
						for pb.Next() {
							if _, err := s.Exec(context.Background(), "SELECT COUNT(*) FROM people WHERE sex = 'F'", nil); err != nil {
								b.Error(err)
								return
							}
						}
					})
				})
			}
		}
	}
}
