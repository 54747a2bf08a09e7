package snapshot_test

import (
	"math/rand/v2"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
)

// TestSnapshotWideUnitDictionary: more than 65,536 distinct units (codes kept
// in 32 bits), some with two rows, some rows without a unit: plain, keyed
// and bounded counts against SQLite.
func TestSnapshotWideUnitDictionary(t *testing.T) {
	if testing.Short() {
		t.Skip("scale: more than 65,536 units against SQLite: skipped under -short; go test ./... runs it")
	}
	r := rand.New(rand.NewPCG(65, 537))
	var rows [][]any
	for u := range 70000 {
		var id any = int64(70000 - u)
		if u%997 == 0 {
			id = nil
		}
		for range 1 + u%3/2 {
			rows = append(rows, []any{id, int64(r.IntN(10)), []string{"F", "M"}[r.IntN(2)], "North", int64(r.IntN(70000))})
		}
	}
	raw, fast := openBothPaths(t, rows)
	people := fixture.People()
	gen := fixture.Gen{R: r}
	for i := range 24 {
		q := &ir.Query{Table: "people", Where: gen.Pred(1), GroupBy: [][]string{nil, {"age"}}[i%2]}
		needs := []ir.Needs{{Units: true}, {Key: true}, {Bound: true, Units: true, Bounds: ir.Bounds{MaxRowsPerUnit: 1 + int64(i%10), MaxGroupsPerUnit: 1}}}[i%3]
		sameOnBothPaths(t, i, raw, fast, people, q, needs, fixture.Secret)
	}
}
