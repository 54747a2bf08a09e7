package planner

import (
	"testing"

	"countwall/ir"
	"countwall/pgerror"
)

func TestCopyOut(t *testing.T) {
	cases := []struct {
		sql    string
		query  string
		out    ir.CopyOut
		isCopy bool
		code   pgerror.Code
	}{
		{"SELECT COUNT(*) FROM people", "", ir.CopyOut{}, false, ""},
		{"COPY ( SELECT sex, COUNT(*) FROM people GROUP BY sex ) TO STDOUT", "SELECT sex, COUNT(*) FROM people GROUP BY sex", ir.CopyOut{}, true, ""},
		{"copy (SELECT COUNT(*) FROM people WHERE suburb = ')') to stdout with csv header;", "SELECT COUNT(*) FROM people WHERE suburb = ')'", ir.CopyOut{CSV: true, Header: true}, true, ""},
		{"COPY (SELECT COUNT(*) FROM people) TO STDOUT WITH (FORMAT csv, HEADER true)", "SELECT COUNT(*) FROM people", ir.CopyOut{CSV: true, Header: true}, true, ""},
		{"COPY (SELECT COUNT(*) FROM people) TO STDOUT (FORMAT text, HEADER off)", "SELECT COUNT(*) FROM people", ir.CopyOut{}, true, ""},
		{"COPY (SELECT COUNT(*) FROM people) TO STDOUT (FORMAT binary)", "", ir.CopyOut{}, true, pgerror.FeatureNotSupported},
		{"COPY (SELECT COUNT(*) FROM people) TO STDOUT DELIMITER ';'", "", ir.CopyOut{}, true, pgerror.FeatureNotSupported},
		{"COPY people TO STDOUT", "", ir.CopyOut{}, true, pgerror.FeatureNotSupported},
		{"COPY (SELECT COUNT(*) FROM people) TO '/tmp/x'", "", ir.CopyOut{}, true, pgerror.FeatureNotSupported},
		{"COPY people FROM STDIN", "", ir.CopyOut{}, true, pgerror.ReadOnlySQLTransaction},
		{"COPY people (age, sex) FROM '/tmp/x' WITH (FORMAT csv)", "", ir.CopyOut{}, true, pgerror.ReadOnlySQLTransaction},
		{"COPY () TO STDOUT", "", ir.CopyOut{}, true, pgerror.FeatureNotSupported},
	}
	for _, tc := range cases {
		query, out, isCopy, err := readCopyOut(tc.sql)
		if query != tc.query || out != tc.out || isCopy != tc.isCopy || pgerror.SQLState(err) != tc.code {
			t.Errorf("readCopyOut(%q) = %q, %+v, %v, %v; want %q, %+v, %v, %s", tc.sql, query, out, isCopy, err, tc.query, tc.out, tc.isCopy, tc.code)
		}
	}
}
