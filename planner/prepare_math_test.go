package planner

import (
	"testing"

	"countwall/ir"
	"countwall/pgerror"
)

// TestPreparedMathWithParameters: a prepared statement whose arithmetic
// takes a parameter is described (Parse and Describe carry no values, as
// drivers send them before Bind) and checked for totality at Bind, with
// the value bound.
func TestPreparedMathWithParameters(t *testing.T) {
	cat := testCatalog(func(p *ir.Policy) { p.AllowMath = true })
	tests := []struct {
		sql      string
		bound    string
		bindCode pgerror.Code
	}{
		{"SELECT COUNT(*) FROM people WHERE age / $1 > 3", "2", ""},
		{"SELECT COUNT(*) FROM people WHERE age / $1 > 3", "0", pgerror.DivisionByZero},
		{"SELECT COUNT(*) FROM people WHERE age % $1 = 0", "5", ""},
		{"SELECT COUNT(*) FROM people WHERE age % $1 = 0", "0", pgerror.DivisionByZero},
		{"SELECT COUNT(*) FROM people WHERE abs(age + $1) > 0", "-9223372036854775808", pgerror.NumericValueOutOfRange},
		{"SELECT COUNT(*) FROM people WHERE abs(age + $1) > 0", "-40", ""},
	}
	for _, tc := range tests {
		if _, _, err := Prepare(tc.sql, cat).Describe(); err != nil {
			t.Errorf("%q: Describe refused it: %v", tc.sql, err)
			continue
		}
		v := tc.bound
		_, err := Prepare(tc.sql, cat).Bind([]*string{&v})
		if got := pgerror.SQLState(err); got != tc.bindCode {
			t.Errorf("%q with $1 = %s: Bind gave %v, want SQLSTATE %q", tc.sql, tc.bound, err, tc.bindCode)
		}
	}
}
