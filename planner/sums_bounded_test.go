package planner

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
)

// boundedCell is the figures of one bounded cell of SUM(v): its group
// ("" without GROUP BY, "NULL" for the NULL group), rows, units, values,
// exact sum and clamped sum.
type boundedCell struct {
	group        string
	count, units int64
	n, sum       int64
	clamped      float64
}

// TestBoundedSumsPerPersonRule states the per-person rule of bounded sums
// (plan's sums_bounded.go) case by case, with exact figures, on the SQLite
// path (the fold of the bounded sums SQL) and on the snapshot: v has the
// bounds [0, 100]; each row is (unit, grp, v).
func TestBoundedSumsPerPersonRule(t *testing.T) {
	tests := []struct {
		name    string
		rows    [][]any
		c, g    int64
		grouped bool
		where   ir.Pred
		want    []boundedCell
	}{
		{"a person with n > C values counts C times their mean", [][]any{{1, "a", 10}, {1, "a", 20}, {1, "a", 30}, {1, "a", 40}, {2, "a", 5}}, 2, 1, false, nil,
			[]boundedCell{{"", 3, 2, 3, 105, 55}}},
		{"values outside the bounds are clamped, the exact sum is not", [][]any{{1, "a", -50}, {1, "a", 250}, {1, "a", 30}}, 5, 1, false, nil,
			[]boundedCell{{"", 3, 1, 3, 230, 130}}},
		{"clamped, then scaled by C/n", [][]any{{1, "a", 250}, {1, "a", 250}, {1, "a", 250}}, 2, 1, false, nil,
			[]boundedCell{{"", 2, 1, 2, 750, 200}}},
		{"C/n that is not exact in binary", [][]any{{1, "a", 10}, {1, "a", 10}, {1, "a", 11}}, 1, 1, false, nil,
			[]boundedCell{{"", 1, 1, 1, 31, scaled(31, 1, 3)}}},
		{"rows without a person count for nothing", [][]any{{nil, "a", 5}, {nil, "a", 5}, {2, "a", 7}}, 1, 1, false, nil,
			[]boundedCell{{"", 1, 1, 1, 7, 7}}},
		{"only rows without a person: no cell kept", [][]any{{nil, "a", 5}}, 1, 1, false, nil,
			[]boundedCell{{"", 0, 0, 0, 0, 0}}},
		{"NULL values count as rows, not values", [][]any{{1, "a", nil}, {1, "a", nil}, {1, "a", 40}, {2, nil, nil}}, 2, 1, true, nil,
			[]boundedCell{{"NULL", 1, 1, 0, 0, 0}, {"a", 2, 1, 1, 40, 40}}},
		{"a person in several cells beyond G keeps G by rank", [][]any{{1, "a", 10}, {1, "b", 20}, {1, "c", 30}, {1, "d", 40}, {2, "a", 1}, {2, "b", 2}}, 1, 2, true, nil,
			[]boundedCell{{"a", 1, 1, 1, 1, 1}, {"b", 2, 2, 2, 22, 22}, {"d", 1, 1, 1, 40, 40}}},
		{"G chooses among the matching cells only", [][]any{{1, "a", 10}, {1, "b", 20}, {1, "c", 30}, {1, "d", 40}}, 1, 1, true,
			&ir.Compare{Column: "grp", Op: ">", Value: fixture.TextLit("b")},
			[]boundedCell{{"d", 1, 1, 1, 40, 40}}},
	}
	table := &ir.Table{Name: "t", PrivacyUnit: "unit", Policy: ir.DefaultPolicy(), Columns: map[string]*ir.Column{
		"unit": {Name: "unit", Type: ir.TypeInt}, "grp": {Name: "grp", Type: ir.TypeText},
		"v": {Name: "v", Type: ir.TypeInt, Bounds: &ir.ValueBounds{Min: 0, Max: 100}},
	}}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeBoundedRows(t, tc.rows)
			q := &ir.Query{Table: "t", Where: tc.where, Aggregates: []ir.Aggregate{{Func: ir.FuncSum, Column: "v", Alias: "sum"}}}
			if tc.grouped {
				q.GroupBy = []string{"grp"}
				q.Aggregates[0].Position = 1
			}
			needs := ir.Needs{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: tc.c, MaxGroupsPerUnit: tc.g}, Oblivious: true}
			for _, opts := range []plan.StoreOptions{{NoSnapshot: true}, {}} {
				s, err := OpenStore(path, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				res, err := s.Run(ctx, table, q, needs, fixture.Secret)
				if err != nil {
					t.Fatal(err)
				}
				var got []boundedCell
				for _, c := range res.Cells {
					group := ""
					if len(c.Group) > 0 {
						group = c.Group[0].Text
						if c.Group[0].Null {
							group = "NULL"
						}
					}
					got = append(got, boundedCell{group, c.Count, c.Units, c.Sums[0].N, c.Sums[0].Int.Int64(), c.Sums[0].Clamped})
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("%s:\n got %v\nwant %v", res.Path, got, tc.want)
				}
			}
		})
	}
}

// TestBoundedSumsRankChoice checks the cells the cases above keep are
// those of smallest CellRank for the fixture's secret (b and d of person
// 1's four; d of c and d), so that their figures state the rule rather
// than an accident of order.
func TestBoundedSumsRankChoice(t *testing.T) {
	rank := func(g string) int64 { return plan.CellRank(fixture.Secret, int64(1), g) }
	for _, kept := range []string{"b", "d"} {
		for _, dropped := range []string{"a", "c"} {
			if rank(kept) >= rank(dropped) {
				t.Errorf("cell %s (rank %d) is kept over cell %s (rank %d)", kept, rank(kept), dropped, rank(dropped))
			}
		}
	}
}

// scaled is a clamped total of n values scaled to C, in float64 at run
// time as the backends compute it (a constant expression would be exact).
func scaled(total float64, c, n int64) float64 { return total * (float64(c) / float64(n)) }

// writeBoundedRows writes rows (unit, grp, v) to a new SQLite file.
func writeBoundedRows(t *testing.T, rows [][]any) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bounded.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t (unit INTEGER, grp TEXT, v INTEGER)"); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if _, err := db.Exec("INSERT INTO t VALUES (?, ?, ?)", r...); err != nil {
			t.Fatal(err)
		}
	}
	return path
}
