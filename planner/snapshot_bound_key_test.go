package planner

import (
	"context"
	"math/rand/v2"
	"testing"

	"countwall/ir"
)

// TestSnapshotBoundedWithKeys: SQLite's bounding SQL refuses contributor keys
// under contribution bounds; the snapshot must refuse too (or decline), not
// answer without them.
func TestSnapshotBoundedWithKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rows := diffRows(r, 200)
	sqlRows := diffSQLRows(rows)
	raw, fast := openBothPaths(t, sqlRows)
	people := testPeopleTable()
	q := &ir.Query{Table: "people"}
	needs := ir.Needs{Bound: true, Key: true, Bounds: ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 1}}
	_, werr := raw.Run(context.Background(), people, q, needs, testSecret)
	got, ok, gerr := fast.snap.Answer(context.Background(), people, q, needs, testSecret)
	if ok && (werr == nil) != (gerr == nil) {
		t.Errorf("SQLite: %v; snapshot: %+v, %v", werr, got, gerr)
	}
}
