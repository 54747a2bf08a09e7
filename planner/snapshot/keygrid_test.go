package snapshot_test

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/snapshot"
)

// TestKeyGridsAnswerAsRows holds the key grids' answers (cellkey's counts
// and contributor keys from per-pair-of-values sums) to the rows' path and,
// every tenth query, to SQLite: 400 seeded predicates of up to three levels
// of AND, OR and NOT on a table keyed by its unit, with no GROUP BY and with
// one on each column, under the needs of cellkey and of layered. The grids'
// share of memory lets only some pairs have one, so that the rest take the
// rows' path beside them; the secret changes halfway, so the grids are
// summed again.
func TestKeyGridsAnswerAsRows(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 7))
	_, rows := oneRowPerUnit(r, 3000, 0)
	raw, fast := openBothPaths(t, rows)
	people := fixture.People()
	people.UnitKeyed = true
	gen := fixture.Gen{R: r}
	groupBy := [][]string{nil, nil, {"age"}, {"sex"}, {"suburb"}, {"income"}}
	defer func(old bool) { snapshot.KeyGrids = old }(snapshot.KeyGrids)
	for i := range 400 {
		q := &ir.Query{Table: "people", Where: gen.Pred(3), GroupBy: groupBy[i%len(groupBy)]}
		if i%9 == 0 {
			q.Where = nil
		}
		if i%5 == 4 {
			q.Agg = ir.CountDistinct
		}
		needs := []ir.Needs{{Key: true}, {Key: true, Units: true, Conditions: true}}[i%2]
		secret := fixture.Secret
		if i >= 200 {
			secret = []byte("the second half's secret")
		}
		snapshot.KeyGrids = true
		got, err := answer(t, fast, people, q, needs, secret)
		if err != nil {
			t.Fatal(err)
		}
		snapshot.KeyGrids = false
		want, err := answer(t, fast, people, q, needs, secret)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("query %d %s: grids %+v, rows %+v", i, fixture.DebugSQL(people, q), got.Cells, want.Cells)
		}
		if i%10 == 0 {
			snapshot.KeyGrids = true
			sameOnBothPaths(t, i, raw, fast, people, q, needs, secret)
		}
	}
	snap, err := fast.Current(context.Background(), "people")
	if err != nil {
		t.Fatal(err)
	}
	if held, limit := snap.KeyGridBytes(), snap.Bytes()/4; held == 0 || held > limit {
		t.Errorf("the key grids hold %d bytes, want some and at most a quarter of the snapshot's %d", held, snap.Bytes())
	}
}
