package snapshot_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/planner/internal/fixture"
)

// A statement whose context is cancelled (a CancelRequest, or the query
// timeout) is refused with 57014 on the snapshot's path too, as it is when
// SQLite answers, whatever the snapshot could have answered.
func TestSnapshotPathHonoursCancellation(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	_, sqlRows := oneRowPerUnit(r, 200, 0)
	_, fast := openBothPaths(t, sqlRows)
	people := fixture.People()
	q := &ir.Query{Table: "people", Where: &ir.Compare{Column: "age", Op: ">", Value: fixture.IntLit(3)}}
	if _, err := fast.Run(context.Background(), people, q, ir.Needs{}, nil); err != nil {
		t.Fatal(err) // reads the table into memory
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := fast.Run(ctx, people, q, ir.Needs{}, nil)
	if got := pgerror.SQLState(err); got != pgerror.QueryCanceled {
		t.Errorf("cancelled statement: SQLSTATE %q (%v), want %s", got, err, pgerror.QueryCanceled)
	}
}
