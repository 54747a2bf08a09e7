package planner

import (
	"slices"
	"testing"

	"countwall/ir"
	"countwall/pgtypes"
)

func TestReadOuter(t *testing.T) {
	csv := &ir.CopyOut{CSV: true}
	cases := []struct {
		sql  string
		want Outer
		ok   bool
	}{
		{"SELECT COUNT(*) FROM people", Outer{}, false},
		{"copyright", Outer{}, false}, // a first word that only starts like one
		{"  COPY(SELECT COUNT(*) FROM people) TO STDOUT CSV", Outer{Query: "SELECT COUNT(*) FROM people", Copy: csv}, true},
		{"DECLARE c CURSOR WITH HOLD FOR SELECT COUNT(*) FROM people", Outer{Query: "SELECT COUNT(*) FROM people", Cursor: "c", Hold: true}, true},
		{"prepare q as SELECT COUNT(*) FROM people WHERE age > $1;", Outer{Query: "SELECT COUNT(*) FROM people WHERE age > $1", Prepare: "q"}, true},
		// Refused forms are left to the planner, which says why.
		{"COPY people FROM STDIN", Outer{}, false},
		{"DECLARE c SCROLL CURSOR FOR SELECT COUNT(*) FROM people", Outer{}, false},
		{"PREPARE q (int, character varying(3)) AS SELECT COUNT(*) FROM people", Outer{Query: "SELECT COUNT(*) FROM people", Prepare: "q", Types: []pgtypes.OID{23, 1043}}, true},
		{"PREPARE q (nosuchtype) AS SELECT COUNT(*) FROM people", Outer{}, false},
	}
	for _, tc := range cases {
		got, ok := ReadOuter(tc.sql)
		same := got.Query == tc.want.Query && got.Cursor == tc.want.Cursor && got.Hold == tc.want.Hold &&
			got.Prepare == tc.want.Prepare && slices.Equal(got.Types, tc.want.Types) && (got.Copy == nil) == (tc.want.Copy == nil) && (got.Copy == nil || *got.Copy == *tc.want.Copy)
		if ok != tc.ok || (ok && !same) {
			t.Errorf("ReadOuter(%q) = %+v, %v; want %+v, %v", tc.sql, got, ok, tc.want, tc.ok)
		}
	}
}
