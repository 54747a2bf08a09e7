package planner

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"countwall/pgerror"
)

// PostgreSQL's input functions, as PostgreSQL 15 reads a value's text:
// bigint, integer and smallint (int8in and friends), double precision and
// real (float8in, float4in, which read what the C library's strtod reads)
// and numeric (numeric_in, with the limits of its storage format). A quoted
// constant or a bound parameter is read by the input function of the type
// PostgreSQL gives it, so that countwall accepts, refuses and rounds what
// PostgreSQL does. Each error names what was read ("parameter $2", "the
// value compared with column \"age\""), never the text itself.

// isSpace is C's isspace in the "C" locale, which PostgreSQL's input
// functions skip around a value; strings.TrimSpace would also skip
// Unicode spaces, which PostgreSQL refuses.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// integerTypes are the bit sizes and names of PostgreSQL's integer types.
var integerTypes = map[int]string{16: "smallint", 32: "integer", 64: "bigint"}

// readInteger reads s as PostgreSQL's integer input of the given bit size
// does: spaces around an optional sign and decimal digits; 22003 beyond
// the type's range, 22P02 for anything else.
func readInteger(s string, bits int, what subject) (int64, error) {
	t := trimSpace(s)
	if !digitsOnly(unsigned(t)) {
		return 0, pgerror.Errorf(pgerror.InvalidTextRepresentation, "invalid input syntax for type %s: %s", integerTypes[bits], what)
	}
	n, err := strconv.ParseInt(t, 10, bits)
	if err != nil {
		return 0, pgerror.Errorf(pgerror.NumericValueOutOfRange, "%s is out of range for type %s", what, integerTypes[bits])
	}
	return n, nil
}

// floatTypes are the bit sizes and names of PostgreSQL's floating-point types.
var floatTypes = map[int]string{32: "real", 64: "double precision"}

// readFloat reads s as float8in (bits 64) or float4in (bits 32) does: what
// strtod reads (decimal, hexadecimal with an optional binary exponent,
// inf, infinity, nan and nan(chars), case-insensitive, signed), with
// spaces around it, correctly rounded. A value that rounds to an infinity,
// or to zero although it is not zero, is out of range (22003); a denormal
// is accepted.
func readFloat(s string, bits int, what subject) (float64, error) {
	t := trimSpace(s)
	if f, ok := specialFloat(t); ok {
		return f, nil
	}
	goText, nonZero, ok := floatSyntax(t)
	if !ok {
		return 0, pgerror.Errorf(pgerror.InvalidTextRepresentation, "invalid input syntax for type %s: %s", floatTypes[bits], what)
	}
	f, err := strconv.ParseFloat(goText, bits)
	if err != nil || math.IsInf(f, 0) || (f == 0 && nonZero) {
		return 0, pgerror.Errorf(pgerror.NumericValueOutOfRange, "%s is out of range for type %s", what, floatTypes[bits])
	}
	return f, nil
}

// specialFloat reads the infinities and NaNs strtod takes: inf and
// infinity with an optional sign, nan with an optional sign and an
// optional (chars) of letters, digits and underscores.
func specialFloat(t string) (float64, bool) {
	body := unsigned(t)
	sign := 1
	if strings.HasPrefix(t, "-") {
		sign = -1
	}
	lower := strings.ToLower(body)
	switch lower {
	case "inf", "infinity":
		return math.Inf(sign), true
	case "nan":
		return math.NaN(), true
	}
	if strings.HasPrefix(lower, "nan(") && strings.HasSuffix(lower, ")") {
		for _, c := range lower[4 : len(lower)-1] {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
				return 0, false
			}
		}
		return math.NaN(), true
	}
	return 0, false
}

// floatSyntax checks t against strtod's grammar for a finite number and
// returns it as Go's ParseFloat reads it (a hexadecimal mantissa needs a
// binary exponent there), and whether any digit of it is not zero.
func floatSyntax(t string) (goText string, nonZero, ok bool) {
	body := unsigned(t)
	hex := len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')
	digit, expMark := isDecimalDigit, "eE"
	if hex {
		body, digit, expMark = body[2:], isHexDigit, "pP"
	}
	mantissa := body
	if i := strings.IndexAny(body, expMark); i >= 0 {
		mantissa = body[:i]
		if !digitsOnly(unsigned(body[i+1:])) {
			return "", false, false
		}
	}
	intPart, frac, _ := strings.Cut(mantissa, ".")
	if intPart+frac == "" || !allFunc(intPart, digit) || !allFunc(frac, digit) {
		return "", false, false
	}
	nonZero = strings.Trim(intPart+frac, "0") != ""
	goText = t
	if hex && len(mantissa) == len(body) {
		goText += "p0"
	}
	return goText, nonZero, true
}

// digitsOnly reports whether s is one or more ASCII digits.
func digitsOnly(s string) bool {
	return s != "" && allFunc(s, isDecimalDigit)
}

// unsigned is s without one leading sign.
func unsigned(s string) string {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		return s[1:]
	}
	return s
}

func isDecimalDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHexDigit(c byte) bool {
	return isDecimalDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func allFunc(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// numericKind tells a finite numeric from PostgreSQL's special values.
type numericKind int

const (
	numericFinite numericKind = iota
	numericNaN                // greater than every number, equal to itself
	numericPosInf
	numericNegInf
)

// numeric is a value of PostgreSQL's numeric type: digits × 10^exp, the
// digits without leading or trailing zeros ("" for zero).
type numeric struct {
	kind   numericKind
	neg    bool
	digits string
	exp    int
}

// The limits of numeric's storage format: at most 16383 digits after the
// decimal point (NUMERIC_DSCALE_MAX), a first digit at most 10^131071
// (a weight of 32767 base-10000 digits), and an exponent below INT_MAX/2
// in the text.
const (
	numericMaxScale    = 16383
	numericMaxLeading  = 4*32767 + 3
	numericMaxExponent = math.MaxInt32/2 - 1
)

// readNumeric reads s as numeric_in does: spaces around NaN, [+-]Infinity
// or [+-]inf, or around an optional sign, digits with at most one decimal
// point (at least one digit) and an optional exponent (e, then what strtol
// reads: spaces, a sign, digits). 22003 beyond the storage format's
// limits, 22P02 for anything else.
func readNumeric(s string, what subject) (numeric, error) {
	t := trimSpace(s)
	switch strings.ToLower(t) {
	case "nan":
		return numeric{kind: numericNaN}, nil
	case "infinity", "+infinity", "inf", "+inf":
		return numeric{kind: numericPosInf}, nil
	case "-infinity", "-inf":
		return numeric{kind: numericNegInf}, nil
	}
	bad := pgerror.Errorf(pgerror.InvalidTextRepresentation, "invalid input syntax for type numeric: %s", what)
	n := numeric{}
	n.neg, t = strings.HasPrefix(t, "-"), unsigned(t)
	mantissa, expText, hasExp := strings.Cut(strings.ToLower(t), "e")
	intPart, frac, _ := strings.Cut(mantissa, ".")
	if intPart+frac == "" || !digitsOnly(intPart+frac) {
		return numeric{}, bad
	}
	exp := 0
	if hasExp {
		e, ok := strtolExponent(expText)
		if !ok {
			return numeric{}, bad
		}
		if e >= numericMaxExponent+1 || e <= -(numericMaxExponent+1) {
			return numeric{}, errNumericOverflow
		}
		exp = int(e)
	}
	if max(len(frac)-exp, 0) > numericMaxScale {
		return numeric{}, errNumericOverflow
	}
	all := intPart + frac
	trimmed := strings.TrimLeft(all, "0")
	n.digits = strings.TrimRight(trimmed, "0")
	n.exp = exp - len(frac) + (len(trimmed) - len(n.digits))
	if n.digits == "" {
		n.neg, n.exp = false, 0
	} else if n.leading() > numericMaxLeading {
		return numeric{}, errNumericOverflow
	}
	return n, nil
}

var errNumericOverflow = pgerror.Errorf(pgerror.NumericValueOutOfRange, "value overflows numeric format")

// strtolExponent reads a numeric's exponent as strtol does: optional
// spaces, an optional sign, decimal digits, nothing after; a value past the
// int64 range comes out as its sign's extreme, as strtol saturates.
func strtolExponent(s string) (int64, bool) {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	neg, digits := strings.HasPrefix(s, "-"), unsigned(s)
	if !digitsOnly(digits) {
		return 0, false
	}
	e, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		e = math.MaxInt64
	}
	if neg {
		e = -e
	}
	return e, true
}

// leading is the power of ten of a non-zero numeric's first digit.
func (n numeric) leading() int { return len(n.digits) - 1 + n.exp }

// isZero reports whether n is a finite zero.
func (n numeric) isZero() bool { return n.kind == numericFinite && n.digits == "" }

// text is n in exponent form, as Go's parsers read it.
func (n numeric) text() string {
	switch n.kind {
	case numericNaN:
		return "NaN"
	case numericPosInf:
		return "+Inf"
	case numericNegInf:
		return "-Inf"
	}
	if n.digits == "" {
		return "0"
	}
	sign := ""
	if n.neg {
		sign = "-"
	}
	return sign + n.digits + "e" + strconv.Itoa(n.exp)
}

// rat is a finite n as a rational, its magnitude clamped into
// [10^-20, 10^20] when it lies outside: against an integer column a value
// beyond the int64 range compares as any other beyond it on that side, and
// a non-zero value nearer zero than 10^-20 as any other between 0 and 1 (or
// -1 and 0), so the exact value need not be built (10^131071 has 435,000
// bits).
func (n numeric) rat() *big.Rat {
	switch {
	case n.digits == "":
		return new(big.Rat)
	case n.leading() > 20:
		return signedPow10(n.neg, 20)
	case n.leading() < -20:
		return signedPow10(n.neg, -20)
	}
	r, _ := new(big.Rat).SetString(n.text())
	return r
}

func signedPow10(neg bool, e int) *big.Rat {
	r, _ := new(big.Rat).SetString("1e" + strconv.Itoa(e))
	if neg {
		r.Neg(r)
	}
	return r
}

// float is n converted to double precision (bits 64) or real (bits 32), as
// numeric_float8 and numeric_float4 convert: NaN and the infinities as
// they are, a finite value correctly rounded, 22003 where it rounds to an
// infinity or, not being zero, to zero.
func (n numeric) float(bits int, what subject) (float64, error) {
	switch n.kind {
	case numericNaN:
		return math.NaN(), nil
	case numericPosInf:
		return math.Inf(1), nil
	case numericNegInf:
		return math.Inf(-1), nil
	}
	f, err := strconv.ParseFloat(n.text(), bits)
	if err != nil || math.IsInf(f, 0) || (f == 0 && n.digits != "") {
		return 0, pgerror.Errorf(pgerror.NumericValueOutOfRange, "%s is out of range for type %s", what, floatTypes[bits])
	}
	return f, nil
}
