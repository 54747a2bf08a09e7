package ir_test

import (
	"testing"

	"countwall/ir"
)

// TestContributionBounds: a query's bounds are the defaults (one row, one
// cell), overridden field by field by the table's and then by the query's,
// where a zero or negative field overrides nothing.
func TestContributionBounds(t *testing.T) {
	for _, tc := range []struct {
		name            string
		table, override ir.Bounds
		want            ir.Bounds
	}{
		{"neither names one", ir.Bounds{}, ir.Bounds{}, ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}},
		{"the table's C", ir.Bounds{MaxRowsPerUnit: 3}, ir.Bounds{}, ir.Bounds{MaxRowsPerUnit: 3, MaxGroupsPerUnit: 1}},
		{"the table's G", ir.Bounds{MaxGroupsPerUnit: 4}, ir.Bounds{}, ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 4}},
		{"the query's G over the table's", ir.Bounds{MaxRowsPerUnit: 3, MaxGroupsPerUnit: 2}, ir.Bounds{MaxGroupsPerUnit: 5},
			ir.Bounds{MaxRowsPerUnit: 3, MaxGroupsPerUnit: 5}},
		{"the query's both", ir.Bounds{MaxRowsPerUnit: 3, MaxGroupsPerUnit: 2}, ir.Bounds{MaxRowsPerUnit: 7, MaxGroupsPerUnit: 8},
			ir.Bounds{MaxRowsPerUnit: 7, MaxGroupsPerUnit: 8}},
		{"the query's C without the table's", ir.Bounds{}, ir.Bounds{MaxRowsPerUnit: 9}, ir.Bounds{MaxRowsPerUnit: 9, MaxGroupsPerUnit: 1}},
		{"negative fields override nothing", ir.Bounds{MaxRowsPerUnit: -2, MaxGroupsPerUnit: 6}, ir.Bounds{MaxRowsPerUnit: -1, MaxGroupsPerUnit: -1},
			ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := &ir.Table{Name: "people", Bounds: tc.table}
			if got := tbl.ContributionBounds(tc.override); got != tc.want {
				t.Errorf("table %+v, override %+v: %+v, want %+v", tc.table, tc.override, got, tc.want)
			}
		})
	}
	if got := ir.DefaultBounds(); got != (ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}) {
		t.Errorf("DefaultBounds() = %+v, want one row and one cell", got)
	}
}
