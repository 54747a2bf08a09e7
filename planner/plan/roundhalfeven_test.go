package plan_test

import (
	"testing"

	"countwall/planner/plan"
)

// TestRoundHalfEven: PostgreSQL's round(double precision), halves to even,
// on what SQLite may pass; anything that is not a number has no result,
// never an error.
func TestRoundHalfEven(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want float64
		ok   bool
	}{
		{2.5, 2, true},
		{3.5, 4, true},
		{-2.5, -2, true},
		{-3.5, -4, true},
		{2.4999, 2, true},
		{0.5, 0, true},
		{1.5, 2, true},
		{int64(7), 7, true},
		{int64(-9007199254740993), -9007199254740992, true}, // as a double, as PostgreSQL casts it
		{nil, 0, false},
		{"2.5", 0, false},
		{[]byte("2.5"), 0, false},
	} {
		got, ok := plan.RoundHalfEven(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("RoundHalfEven(%#v) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
