package snapshot_test

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
)

// TestCellKeyFiguresPinned pins the figures cellkey's answers are made of:
// each cell's count and contributor key (the sum of its units' record keys,
// which with the secret decides the sticky noise), on seeded tables of
// 20,000 rows, one row a unit and several, under seeded predicates from
// none to every row matching, with and without GROUP BY. The snapshot's
// ways of summing keys may change; the figures may not: the same
// contributors must keep the same answer. Every fifth query is checked
// against SQLite too, which holds the pinned figures to the SQL's.
func TestCellKeyFiguresPinned(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000-row tables: skipped under -short")
	}
	for _, tc := range []struct {
		name  string
		keyed bool // one row a unit (the table declared unit_keyed)
		want  uint64
	}{
		{"one row a unit", true, 0xe6a45cd809ffe3e4},
		{"several rows a unit", false, 0x870eaa8b8e426d01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(36, 2026))
			rows := fixture.Rows(r, 20_000)
			for i, row := range rows {
				if tc.keyed {
					row["id"] = int64(i)
				} else if row["id"] != nil {
					row["id"] = int64(r.IntN(6000))
				}
			}
			raw, fast := openBothPaths(t, fixture.SQLRows(rows))
			people := fixture.People()
			people.UnitKeyed = tc.keyed
			gen := fixture.Gen{R: r}
			sum := fnv.New64a()
			for i := range 120 {
				q := &ir.Query{Table: "people", Where: gen.Pred(2)}
				switch {
				case i%6 == 0:
					q.Where = nil
				case i%6 == 1:
					q.Where = &ir.Not{Inner: q.Where} // most rows, often
				}
				if i%4 == 3 {
					q.GroupBy = []string{"age"}
				}
				res, err := answer(t, fast, people, q, ir.Needs{Key: true}, fixture.Secret)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range res.Cells {
					fmt.Fprintf(sum, "%d:%v %d %d %d;", i, c.Group, c.Count, c.Units, c.Key)
				}
				if i%5 == 0 {
					sameOnBothPaths(t, i, raw, fast, people, q, ir.Needs{Key: true}, fixture.Secret)
				}
			}
			if got := sum.Sum64(); got != tc.want {
				t.Errorf("the cells' counts and keys hash to %#x, pinned %#x: cellkey's answers would change", got, tc.want)
			}
		})
	}
}
