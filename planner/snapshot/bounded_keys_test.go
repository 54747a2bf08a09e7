package snapshot_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
)

// TestSnapshotBoundedWithKeys: SQLite's bounding SQL refuses contributor keys
// under contribution bounds; the snapshot must refuse too (or decline), not
// answer without them.
func TestSnapshotBoundedWithKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rows := fixture.Rows(r, 200)
	sqlRows := fixture.SQLRows(rows)
	raw, fast := openBothPaths(t, sqlRows)
	people := fixture.People()
	q := &ir.Query{Table: "people"}
	needs := ir.Needs{Bound: true, Key: true, Bounds: ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 1}}
	_, werr := raw.Run(context.Background(), people, q, needs, fixture.Secret)
	got, ok, gerr := fast.Answer(context.Background(), people, q, needs, fixture.Secret)
	if ok && (werr == nil) != (gerr == nil) {
		t.Errorf("SQLite: %v; snapshot: %+v, %v", werr, got, gerr)
	}
}
