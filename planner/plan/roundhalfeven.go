package plan

import "math"

// RoundHalfEvenFunc is the SQLite function the planner registers for
// round() in arithmetic conditions: PostgreSQL's round(double precision)
// rounds half to even (rint: round(2.5) is 2), where SQLite's own round
// rounds half away from zero.
const RoundHalfEvenFunc = "countwall_round_half_even"

// RoundHalfEven is the body of RoundHalfEvenFunc on one SQLite value: a
// number as a double rounded half to even, as PostgreSQL casts an integer
// to double precision and rounds it. Anything else (NULL, a text or a blob,
// which a checked expression never passes) has no result: never an error,
// so that no stored value can make a statement fail.
func RoundHalfEven(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return math.RoundToEven(v), true
	case int64:
		return math.RoundToEven(float64(v)), true
	}
	return 0, false
}
