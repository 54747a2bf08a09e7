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

// BenchmarkLongCount answers each bench COUNT on the long table (10,000
// people, 1-20 rows each) under laplace with C = 3 in process, one
// sub-benchmark per statement, and the clip-then-sum loop on the same
// statements: the bench's "long table" lines, statement by statement.
//
//	go test ./attacks/bench -run '^$' -bench LongCount -count 6 | benchstat -
func BenchmarkLongCount(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	dbPath := filepath.Join(dir, "long.db")
	if err := dataset.GeneratePeople(ctx, dbPath, dataset.PeopleOptions{Rows: 10000, Seed: 1, MaxRowsPerPerson: longMaxRows}, dataset.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	srv, err := startLong(ctx, dir, dbPath, "laplace", state.AuditSyncNormal)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	firewall := attacks.InProcess{Session: srv.Engine.NewSession("bench")}
	frame, err := openFrame(ctx, dbPath)
	if err != nil {
		b.Fatal(err)
	}
	for name, q := range map[string]attacks.Querier{"countwall": firewall, "clip-then-sum": frame} {
		for i, stmt := range benchQueries {
			b.Run(fmt.Sprintf("%s/q%d", name, i), func(b *testing.B) {
				for b.Loop() {
					if _, err := q.Query(ctx, stmt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
