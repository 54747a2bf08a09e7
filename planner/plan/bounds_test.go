package plan_test

import (
	"testing"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
)

// TestEffectiveBounds: what a bounded run enforces, from the schema alone.
// COUNT(DISTINCT unit) counts a unit once per cell whatever C says; G is
// lowered to the cells there are when they are known (one for a plain
// COUNT, the domain product for a complete GROUP BY), and then no cells need
// choosing; otherwise a unit's cells are ranked to keep G of them.
func TestEffectiveBounds(t *testing.T) {
	people := fixture.People()
	people.Bounds = ir.Bounds{MaxRowsPerUnit: 3, MaxGroupsPerUnit: 2}
	domains := withDomains([]string{"F", "M", "X"}, 0, 9)
	domains.Bounds = people.Bounds
	for _, tc := range []struct {
		name     string
		tbl      *ir.Table
		q        *ir.Query
		override ir.Bounds
		want     ir.Bounds
		rank     bool
	}{
		{"plain COUNT: one cell", people, &ir.Query{Table: "people"}, ir.Bounds{},
			ir.Bounds{MaxRowsPerUnit: 3, MaxGroupsPerUnit: 1}, false},
		{"COUNT(DISTINCT): one row a unit", people, &ir.Query{Table: "people", Agg: ir.CountDistinct}, ir.Bounds{MaxRowsPerUnit: 9},
			ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}, false},
		{"GROUP BY without a domain: ranked", people, &ir.Query{Table: "people", GroupBy: []string{"sex"}}, ir.Bounds{},
			ir.Bounds{MaxRowsPerUnit: 3, MaxGroupsPerUnit: 2}, true},
		{"G over a product of 3: lowered", domains, &ir.Query{Table: "people", GroupBy: []string{"sex"}}, ir.Bounds{MaxGroupsPerUnit: 5},
			ir.Bounds{MaxRowsPerUnit: 3, MaxGroupsPerUnit: 3}, false},
		{"G equal to the product", domains, &ir.Query{Table: "people", GroupBy: []string{"sex"}}, ir.Bounds{MaxGroupsPerUnit: 3},
			ir.Bounds{MaxRowsPerUnit: 3, MaxGroupsPerUnit: 3}, false},
		{"G under a product of 30: ranked", domains, &ir.Query{Table: "people", GroupBy: []string{"sex", "age"}}, ir.Bounds{MaxRowsPerUnit: 4},
			ir.Bounds{MaxRowsPerUnit: 4, MaxGroupsPerUnit: 2}, true},
	} {
		needs := ir.Needs{Bound: true, Bounds: tc.override}
		shape, err := plan.NewShape(tc.tbl, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		got, rank := plan.EffectiveBounds(tc.tbl, tc.q, needs, shape)
		if got != tc.want || rank != tc.rank {
			t.Errorf("%s: %+v rank %v, want %+v rank %v", tc.name, got, rank, tc.want, tc.rank)
		}
		if priced, err := plan.Bounds(tc.tbl, tc.q, needs); err != nil || priced != tc.want {
			t.Errorf("%s: Bounds = %+v, %v; want %+v as the run enforces", tc.name, priced, err, tc.want)
		}
	}
	if _, err := plan.Bounds(people, &ir.Query{Table: "people", GroupBy: []string{"zip"}}, ir.Needs{Bound: true}); pgerror.SQLState(err) != pgerror.InternalError {
		t.Errorf("bounds of a query the catalog cannot lay out: %v, want %s", err, pgerror.InternalError)
	}
}
