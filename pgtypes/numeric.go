package pgtypes

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// How PostgreSQL 15 writes the results of sum and avg: double precision in
// its shortest exact form, and numeric with the scale its division picks.

// FormatFloat8 is a double precision as float8out writes it with the
// default extra_float_digits: the shortest text that reads back exactly,
// in fixed notation for decimal exponents -4 to 14 and in exponent
// notation (1e+15, 1e-05) otherwise.
func FormatFloat8(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0"
		}
		return "0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, err := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if err == nil && exp >= -4 && exp < 15 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return e
}

// nbase is numeric's digit base: PostgreSQL keeps a numeric in base-10000
// digits.
var nbase = big.NewInt(10000)

// numericWeight is the weight (the power of 10000 of its first digit) and
// the first base-10000 digit of |n|; 0 and 0 for zero.
func numericWeight(n *big.Int) (weight int, first int64) {
	a := new(big.Int).Abs(n)
	for a.Cmp(nbase) >= 0 {
		a.Quo(a, nbase)
		weight++
	}
	return weight, a.Int64()
}

// FormatNumericAvg is avg over an integer column as PostgreSQL writes it:
// sum / n as numeric division computes it (select_div_scale), at least 16
// significant digits and never fewer than 0 decimals, rounded half away
// from zero, every decimal of the scale written (1.5000000000000000).
// n must be positive.
func FormatNumericAvg(sum *big.Int, n int64) string {
	w1, f1 := numericWeight(sum)
	w2, f2 := numericWeight(big.NewInt(n))
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	scale := min(max(16-qweight*4, 0), 1000)
	// round(|sum| * 10^scale / n), half away from zero, then the sign.
	num := new(big.Int).Abs(sum)
	num.Mul(num, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	q, r := new(big.Int).QuoRem(num, big.NewInt(n), new(big.Int))
	if r.Lsh(r, 1).Cmp(big.NewInt(n)) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	digits := q.String()
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if sum.Sign() < 0 && q.Sign() != 0 {
		digits = "-" + digits
	}
	return digits
}
