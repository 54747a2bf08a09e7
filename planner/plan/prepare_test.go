package plan_test

import (
	"testing"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
)

// TestPrepare: what every backend checks before it reads. A table and a
// query that do not belong together, keys or a choice of cells without a
// secret, are the caller's mistakes (XX000), refused before any read; a
// group limit in needs replaces the table's; bounds are computed only when
// asked for.
func TestPrepare(t *testing.T) {
	people := fixture.People()
	grouped := &ir.Query{Table: "people", GroupBy: []string{"sex"}}
	for _, tc := range []struct {
		name   string
		tbl    *ir.Table
		q      *ir.Query
		needs  ir.Needs
		secret []byte
		msg    string // the refusal, or "" for none
	}{
		{"no table", nil, &ir.Query{Table: "people"}, ir.Needs{}, nil, "planner: Run needs a table and a query"},
		{"no query", people, nil, ir.Needs{}, nil, "planner: Run needs a table and a query"},
		{"keys without a secret", people, &ir.Query{Table: "people"}, ir.Needs{Key: true}, nil,
			"planner: contributor keys need a secret, and none was given"},
		{"another table", people, &ir.Query{Table: "bank"}, ir.Needs{}, nil, `planner: query on table "bank" run against table "people"`},
		{"the table's name in another case", people, &ir.Query{Table: "PEOPLE"}, ir.Needs{}, nil, ""},
		{"ranked cells without a secret", people, grouped, ir.Needs{Bound: true}, nil,
			"planner: choosing a unit's cells needs a secret, and none was given"},
		{"ranked cells with a secret", people, grouped, ir.Needs{Bound: true}, fixture.Secret, ""},
		{"a plain COUNT bounded needs no secret", people, &ir.Query{Table: "people"}, ir.Needs{Bound: true}, nil, ""},
	} {
		_, _, _, err := plan.Prepare(tc.tbl, tc.q, tc.needs, tc.secret)
		switch {
		case tc.msg == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.msg != "" && (err == nil || err.Error() != tc.msg || pgerror.SQLState(err) != pgerror.InternalError):
			t.Errorf("%s: %v, want %s: %s", tc.name, err, pgerror.InternalError, tc.msg)
		}
	}

	shape, bounds, rank, err := plan.Prepare(people, grouped, ir.Needs{GroupLimit: 123}, nil)
	if err != nil || shape.MaxGroups != 123 || bounds != (ir.Bounds{}) || rank {
		t.Errorf("GroupLimit 123, unbounded: max groups %d, bounds %+v, rank %v, %v; want 123, none, false", shape.MaxGroups, bounds, rank, err)
	}
	_, bounds, rank, err = plan.Prepare(people, grouped, ir.Needs{Bound: true, Bounds: ir.Bounds{MaxRowsPerUnit: 4}}, fixture.Secret)
	if err != nil || bounds != (ir.Bounds{MaxRowsPerUnit: 4, MaxGroupsPerUnit: 1}) || !rank {
		t.Errorf("bounded GROUP BY: bounds %+v, rank %v, %v; want C 4, G 1, ranked", bounds, rank, err)
	}
}
