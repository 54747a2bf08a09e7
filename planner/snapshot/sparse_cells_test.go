package snapshot_test

import (
	"math/rand/v2"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
)

// TestSnapshotSparseCellTotals: GROUP BY over two columns of about 400
// distinct values each (more than 65,536 possible cells, so the totals are
// kept in a map), plain and bounded with cells chosen by rank, units
// repeating and some NULL, against SQLite.
func TestSnapshotSparseCellTotals(t *testing.T) {
	r := rand.New(rand.NewPCG(77, 23))
	var rows [][]any
	for i := range 3000 {
		var id any = int64(r.IntN(500))
		if i%50 == 0 {
			id = nil
		}
		rows = append(rows, []any{id, int64(r.IntN(400)), []string{"F", "M"}[i%2], "North", int64(r.IntN(420))})
	}
	raw, fast := openBothPaths(t, rows)
	people := fixture.People()
	gen := fixture.Gen{R: r}
	for i := range 60 {
		q := &ir.Query{Table: "people", Where: gen.Pred(1), GroupBy: []string{"age", "income"}}
		if i%3 == 0 {
			q.Where = nil
		}
		needs := []ir.Needs{{Units: true}, {Key: true},
			{Bound: true, Units: true, Bounds: ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 3}},
			{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}}}[i%4]
		needs.GroupLimit = 1 << 20
		sameOnBothPaths(t, i, raw, fast, people, q, needs, fixture.Secret)
	}
}
