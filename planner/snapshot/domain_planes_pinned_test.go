package snapshot_test

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
)

// declaredPeople is fixture.People with domains declared on every column
// but the unit: ranges and categories that hold some stored values and
// leave others (negative incomes, "X", "f", "", "O'Brien") outside or in the
// gaps between them, so that literals land on domain values, between them
// and outside.
func declaredPeople() *ir.Table {
	people := fixture.People()
	people.Columns["age"].Domain = &ir.Domain{IsRange: true, Min: 0, Max: 9}
	people.Columns["income"].Domain = &ir.Domain{IsRange: true, Min: 0, Max: 20}
	people.Columns["sex"].Domain = &ir.Domain{Categories: []string{"M", "F"}}
	people.Columns["suburb"].Domain = &ir.Domain{Categories: []string{"South", "North", "East", "a_b", "Z"}}
	return people
}

// TestObliviousFiguresPinned pins the counts the claiming mechanisms'
// evaluation gives (Needs.Oblivious, plain and bounded per unit) on a
// seeded table of 20,000 rows under seeded predicates over columns with
// declared domains, and holds every fourth answer to SQLite's: the ways of
// evaluating a WHERE may change, the figures may not.
func TestObliviousFiguresPinned(t *testing.T) {
	if testing.Short() {
		t.Skip("a 20,000-row table: skipped under -short")
	}
	r := rand.New(rand.NewPCG(36, 64))
	rows := fixture.Rows(r, 20_000)
	for _, row := range rows {
		if row["id"] != nil {
			row["id"] = int64(r.IntN(6000))
		}
	}
	raw, fast := openBothPaths(t, fixture.SQLRows(rows))
	people := declaredPeople()
	gen := fixture.Gen{R: r}
	sum := fnv.New64a()
	for i := range 300 {
		q := &ir.Query{Table: "people", Where: gen.Pred(2)}
		needs := ir.Needs{Oblivious: true}
		if i%2 == 1 {
			needs.Bound, needs.Bounds = true, ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 1}
		}
		res, err := answer(t, fast, people, q, needs, fixture.Secret)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Cells {
			fmt.Fprintf(sum, "%d:%v %d %d;", i, c.Group, c.Count, c.Units)
		}
		if i%4 < 2 {
			sameOnBothPaths(t, i, raw, fast, people, q, needs, fixture.Secret)
		}
	}
	if got, want := sum.Sum64(), uint64(0xd9fdb82a09d37a24); got != want {
		t.Errorf("the counts hash to %#x, pinned %#x: the claiming mechanisms' answers would change", got, want)
	}
}
