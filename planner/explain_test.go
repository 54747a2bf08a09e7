package planner

import (
	"testing"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/planner/internal/fixture"
)

// TestExplain: EXPLAIN is read with the statement it explains, from the
// one reading of its tokens; its options, a missing statement and EXPLAIN
// of anything but a query are refused, and it is never transaction control.
func TestExplain(t *testing.T) {
	cat := &ir.Catalog{Tables: map[string]*ir.Table{"people": fixture.People()}}
	for _, tc := range []struct {
		sql      string
		explains bool
		code     pgerror.Code
	}{
		{"EXPLAIN SELECT COUNT(*) FROM people WHERE age > 3", true, ""},
		{"explain select count(*) from people;", true, ""},
		{"SELECT COUNT(*) FROM people", false, ""},
		{"EXPLAIN", true, pgerror.SyntaxError},
		{"EXPLAIN ;", true, pgerror.SyntaxError},
		{"EXPLAIN ANALYZE SELECT COUNT(*) FROM people", true, pgerror.FeatureNotSupported},
		{"EXPLAIN (FORMAT JSON) SELECT COUNT(*) FROM people", true, pgerror.FeatureNotSupported},
		{"EXPLAIN SET epsilon = 1", true, pgerror.FeatureNotSupported},
		{"EXPLAIN COMMIT", true, pgerror.FeatureNotSupported},
		{"EXPLAIN SELECT COUNT(*) FROM nowhere", true, pgerror.UndefinedTable},
		{";EXPLAIN SELECT COUNT(*) FROM people", false, pgerror.SyntaxError},
	} {
		pr := Prepare(tc.sql, cat)
		st, err := pr.Bind(nil)
		if pr.Explained() != tc.explains || pgerror.SQLState(err) != tc.code || pr.Control() != "" {
			t.Errorf("%q: explained %v, error %v, control %q; want %v and %q", tc.sql, pr.Explained(), err, pr.Control(), tc.explains, tc.code)
		}
		if _, isQuery := st.(*ir.Query); tc.code == "" && !isQuery {
			t.Errorf("%q read as %T", tc.sql, st)
		}
	}
}
