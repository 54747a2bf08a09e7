package planner

import (
	"errors"
	"slices"
	"testing"

	"countwall/pgerror"
	"countwall/pgtypes"
)

// TestPrepareDeclaredTypes: PREPARE's list of types is read as PostgreSQL
// names its types, typmods aside, and a type it does not have is 42704.
func TestPrepareDeclaredTypes(t *testing.T) {
	cases := []struct {
		sql   string
		types []pgtypes.OID
		code  pgerror.Code
	}{
		{"PREPARE p (int, text) AS SELECT COUNT(*) FROM people WHERE age > $1 AND sex = $2", []pgtypes.OID{23, 25}, ""},
		{"PREPARE p(double precision, numeric(10, 2), character varying(5)[], bigint[]) AS SELECT COUNT(*) FROM people", []pgtypes.OID{701, 1700, 1015, 1016}, ""},
		{"PREPARE p (TIMESTAMP WITH TIME ZONE, unknown) AS SELECT COUNT(*) FROM people", []pgtypes.OID{1184, 705}, ""},
		{"PREPARE p (timestamp without time zone, time with time zone, pg_catalog.int8, \"char\") AS SELECT COUNT(*) FROM people", []pgtypes.OID{1114, 1266, 20, 18}, ""},
		{"PREPARE p (char varying(3), dec, date[]) AS SELECT COUNT(*) FROM people", nil, pgerror.FeatureNotSupported},
		{"PREPARE p AS SELECT COUNT(*) FROM people", nil, ""},
		{"PREPARE p (widget) AS SELECT COUNT(*) FROM people", nil, pgerror.UndefinedObject},
		{"PREPARE p () AS SELECT COUNT(*) FROM people", nil, pgerror.SyntaxError},
		{"PREPARE p (int AS SELECT COUNT(*) FROM people", nil, pgerror.SyntaxError},
		{"PREPARE p (int, 'x') AS SELECT COUNT(*) FROM people", nil, pgerror.SyntaxError},
		{"PREPARE p (int) SELECT COUNT(*) FROM people", nil, pgerror.SyntaxError},
		{"PREPARE p (json[]) AS SELECT COUNT(*) FROM people", nil, pgerror.FeatureNotSupported},
	}
	for _, tc := range cases {
		p, _, err := readPrepare(tc.sql)
		var pe *pgerror.Error
		switch {
		case tc.code != "" && (!errors.As(err, &pe) || pe.Code != tc.code):
			t.Errorf("%s: %v, want SQLSTATE %s", tc.sql, err, tc.code)
		case tc.code == "" && (err != nil || !slices.Equal(p.types, tc.types) || p.name != "p"):
			t.Errorf("%s: %+v, %v; want types %v", tc.sql, p, err, tc.types)
		}
	}
}
