package planner

import (
	"testing"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/pgtypes"
)

// TestDeclaredParametersInArithmetic: inside an arithmetic condition a
// parameter is read as the type its context gives an untyped one; one
// declared that type is the same, one declared another number type is
// refused (PostgreSQL would convert it, countwall does not inside an
// expression), and one of no number type has no operator.
func TestDeclaredParametersInArithmetic(t *testing.T) {
	cat := testCatalog(func(p *ir.Policy) { p.AllowMath = true })
	tests := []struct {
		sql  string
		typ  pgtypes.OID
		arg  string
		code pgerror.Code
	}{
		{"SELECT COUNT(*) FROM people WHERE age + 1 > $1", pgtypes.Unspecified, "40", ""},
		{"SELECT COUNT(*) FROM people WHERE age + 1 > $1", pgtypes.Int8, "40", ""},
		{"SELECT COUNT(*) FROM people WHERE age + 1 > $1", pgtypes.Int8, "40.5", pgerror.InvalidTextRepresentation},
		{"SELECT COUNT(*) FROM people WHERE age + 1 > $1", pgtypes.Float8, "40", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*) FROM people WHERE age + 1 > $1", pgtypes.Numeric, "40", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*) FROM people WHERE age + 1 > $1", pgtypes.Text, "40", pgerror.UndefinedFunction},
		{"SELECT COUNT(*) FROM people WHERE abs(score) > $1", pgtypes.Float8, "0.5", ""},
		{"SELECT COUNT(*) FROM people WHERE abs(score) > $1", pgtypes.Unspecified, "NaN", pgerror.DatatypeMismatch},
	}
	for _, tc := range tests {
		pr := Prepare(tc.sql, cat)
		pr.Declare([]pgtypes.OID{tc.typ})
		_, err := pr.Bind([]*string{str(tc.arg)})
		if got := pgerror.SQLState(err); got != tc.code {
			t.Errorf("%s with $1 %s %q: %v (SQLSTATE %q), want %q", tc.sql, tc.typ.Name(), tc.arg, err, got, tc.code)
		}
	}
}
