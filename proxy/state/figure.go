package state

import (
	"math"
	"strconv"
)

// Budget figures as people read them. The ledger sums charges in binary
// floating point, where ten charges of 0.1 come to 0.9999999999999999; a
// figure shown or published (a NOTICE, SHOW budget, EXPLAIN, `countwall
// budget list`, the metrics) is rounded to figureDigits significant digits
// first. That is far above the rounding of a running sum (a part in 10^16
// a charge) and far below any share an analyst can SET, so the figure is
// the decimal the charges add up to.
const figureDigits = 12

// Figure rounds a budget amount to figureDigits significant digits, for a
// figure sent as a number (SHOW budget's columns, the metrics). Zero,
// infinities and NaN are returned as they are.
func Figure(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', figureDigits, 64), 64)
	if err != nil {
		return x
	}
	return r
}

// FormatFigure writes a budget amount as Figure rounds it, in its shortest
// form: "1", "0.3", "1e-10", "+Inf".
func FormatFigure(x float64) string {
	return strconv.FormatFloat(Figure(x), 'g', -1, 64)
}
