package snapshot_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/snapshot"
)

// TestSnapshotLongTableEveryWay: a long table (400 units of 1 to 20 rows in
// shuffled file order, some rows without a unit, income over 300 values so
// that cuts are built) asked plain, distinct and bounded counts, with and
// without GROUP BY and cell choice, under every leaf way; every figure must
// be SQLite's.
func TestSnapshotLongTableEveryWay(t *testing.T) {
	if testing.Short() {
		t.Skip("scale: a long table under every leaf way: skipped under -short; go test ./... runs it")
	}
	r := rand.New(rand.NewPCG(4, 400))
	var rows [][]any
	for u := range 400 {
		for range 1 + r.IntN(20) {
			var id any = int64(u * 7 % 401)
			if r.IntN(40) == 0 {
				id = nil
			}
			rows = append(rows, []any{id, int64(r.IntN(10)), []string{"F", "M", "X"}[r.IntN(3)],
				[]string{"North", "South", "East"}[r.IntN(3)], int64(r.IntN(300) - 20)})
		}
	}
	r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	raw, fast := openBothPaths(t, rows)
	people := fixture.People()
	defer func(old snapshot.Way) { snapshot.LeafWay = old }(snapshot.LeafWay)
	for _, way := range []snapshot.Way{snapshot.WayCheapest, snapshot.WayListed, snapshot.WayCuts, snapshot.WayOthers, snapshot.WayMasked, snapshot.WayScan} {
		snapshot.LeafWay = way
		t.Run(fmt.Sprint("way-", way), func(t *testing.T) {
			gen := fixture.Gen{R: r}
			for i := range 80 {
				where := gen.Pred(2)
				if i%3 == 1 {
					lo := int64(r.IntN(320) - 30)
					where = &ir.And{Left: where, Right: &ir.Between{Column: "income", Lo: fixture.IntLit(lo), Hi: fixture.IntLit(lo + int64(r.IntN(200))), Negate: i%2 == 0}}
				}
				q := &ir.Query{Table: "people", Where: where, GroupBy: [][]string{nil, {"age"}, {"sex", "suburb"}, nil}[i%4]}
				if i%5 == 4 {
					q.Agg = ir.CountDistinct
				}
				needs := []ir.Needs{{Units: true}, {Key: true},
					{Bound: true, Units: true, Bounds: ir.Bounds{MaxRowsPerUnit: []int64{1, 3, 5, 8, 9, 15}[i%6], MaxGroupsPerUnit: []int64{1, 2, 4}[i%3]}}}[i%3]
				if needs.Key && q.Agg == ir.CountDistinct {
					needs = ir.Needs{Units: true}
				}
				sameOnBothPaths(t, i, raw, fast, people, q, needs, fixture.Secret)
			}
		})
	}
}
