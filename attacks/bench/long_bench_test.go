package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"countwall/attacks"
	"countwall/dataset"
	"countwall/proxy/state"
)

// BenchmarkLong answers each bench COUNT and GROUP BY on the long table
// (10,000 people, 1-20 rows each) in process under exact and under laplace
// with C = 3 and G = 8, one sub-benchmark per statement, and the COUNTs by
// Google's dpagg: the bench's "long table" lines, statement by statement.
//
//	go test ./attacks/bench -run '^$' -bench Long -count 6 | benchstat -
func BenchmarkLong(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	dbPath := filepath.Join(dir, "long.db")
	if err := dataset.GeneratePeople(ctx, dbPath, dataset.PeopleOptions{Rows: 10000, Seed: 1, MaxRowsPerPerson: longMaxRows}, dataset.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, name string, q attacks.Querier, stmts []string) {
		// In turn, as the bench's lines send them.
		b.Run(name+"/in-turn", func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, err := q.Query(ctx, stmts[i%len(stmts)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		for i, stmt := range stmts {
			b.Run(fmt.Sprintf("%s/q%d", name, i), func(b *testing.B) {
				for b.Loop() {
					if _, err := q.Query(ctx, stmt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	for _, mechanism := range []string{"exact", "laplace"} {
		srv, err := startLong(ctx, dir, dbPath, mechanism, state.AuditSyncNormal, nil)
		if err != nil {
			b.Fatal(err)
		}
		q := attacks.InProcess{Session: srv.Engine.NewSession("bench")}
		run(b, mechanism+"-groups", q, benchLongGroupQueries)
		run(b, mechanism+"-count", q, benchQueries)
		srv.Stop()
	}
	frame, err := openFrame(ctx, dbPath, benchEpsilon)
	if err != nil {
		b.Fatal(err)
	}
	run(b, "dpagg", frame, benchQueries)
}
