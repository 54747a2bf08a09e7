package planner

import (
	"math"
	"strconv"
	"unicode/utf8"

	"countwall/pgerror"
	"countwall/pgtypes"
)

// valueKind is what a constant is once read by its type's input function.
type valueKind int

const (
	intValue     valueKind = iota // smallint, integer, bigint
	numericValue                  // numeric: exact, or NaN or an infinity
	floatValue                    // real (widened) or double precision
	textValue                     // text, varchar, character, name, "char"
)

// value is a constant read by its type's input function; kind says which
// field holds it.
type value struct {
	kind valueKind
	i    int64
	num  numeric
	f    float64
	s    string
}

// textTypes are the types PostgreSQL compares with a text column as text.
var textTypes = map[pgtypes.OID]bool{pgtypes.Text: true, pgtypes.Varchar: true, pgtypes.BPChar: true, pgtypes.Name: true, pgtypes.Char: true}

// numberTypes are the types PostgreSQL compares with a bigint or a double
// precision column as numbers.
var numberTypes = map[pgtypes.OID]bool{pgtypes.Int2: true, pgtypes.Int4: true, pgtypes.Int8: true,
	pgtypes.Numeric: true, pgtypes.Float4: true, pgtypes.Float8: true}

// integerBits are the bit sizes of the integer types.
var integerBits = map[pgtypes.OID]int{pgtypes.Int2: 16, pgtypes.Int4: 32, pgtypes.Int8: 64}

// readValue reads s as the input function of type t does (t one of
// textTypes or numberTypes); what names the value in errors.
func readValue(s string, t pgtypes.OID, what subject) (value, error) {
	switch t {
	case pgtypes.Int2, pgtypes.Int4, pgtypes.Int8:
		n, err := readInteger(s, integerBits[t], what)
		return value{kind: intValue, i: n}, err
	case pgtypes.Float4:
		f, err := readFloat(s, 32, what)
		return value{kind: floatValue, f: f}, err
	case pgtypes.Float8:
		f, err := readFloat(s, 64, what)
		return value{kind: floatValue, f: f}, err
	case pgtypes.Numeric:
		n, err := readNumeric(s, what)
		return value{kind: numericValue, num: n}, err
	case pgtypes.BPChar:
		return value{kind: textValue, s: trimBlanks(s)}, nil
	case pgtypes.Name:
		return value{kind: textValue, s: clipName(s)}, nil
	case pgtypes.Char:
		c, err := readChar(s, what)
		return value{kind: textValue, s: c}, err
	}
	if t.IsInputless() {
		return value{}, pgerror.Errorf(pgerror.FeatureNotSupported, "cannot accept a value of type %s (%s)", t.Name(), what)
	}
	return value{kind: textValue, s: s}, nil
}

// trimBlanks is a character (bpchar) value as text: its trailing spaces,
// which pad it and mean nothing, go (PostgreSQL's rtrim1 cast to text).
func trimBlanks(s string) string {
	i := len(s)
	for i > 0 && s[i-1] == ' ' {
		i--
	}
	return s[:i]
}

// maxNameBytes is NAMEDATALEN-1: a name keeps at most 63 bytes.
const maxNameBytes = 63

// clipName is s as a name: cut to 63 bytes, at a character's start, as
// namein cuts it.
func clipName(s string) string {
	if len(s) <= maxNameBytes {
		return s
	}
	n := maxNameBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// readChar reads s as "char" input does: one byte, the first (none for an
// empty string), or the byte a backslash and three octal digits spell; as
// text it is that byte alone. A byte past ASCII would be text that is not
// UTF-8, which countwall does not compare.
func readChar(s string, what subject) (string, error) {
	var b byte
	switch {
	case len(s) == 4 && s[0] == '\\' && isOctal(s[1]) && isOctal(s[2]) && isOctal(s[3]):
		b = (s[1]-'0')<<6 + (s[2]-'0')<<3 + (s[3] - '0')
	case s != "":
		b = s[0]
	}
	switch {
	case b == 0:
		return "", nil
	case b >= utf8.RuneSelf:
		return "", pgerror.Errorf(pgerror.FeatureNotSupported, `%s is a "char" past ASCII, which is not UTF-8 text; countwall does not compare it`, what)
	}
	return string([]byte{b}), nil
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// negate is -v, as PostgreSQL's unary minus of type t computes it: the
// integer types' minimum has no negation (22003).
func negate(v value, t pgtypes.OID, what subject) (value, error) {
	switch v.kind {
	case intValue:
		if v.i == -1<<(integerBits[t]-1) {
			return value{}, pgerror.Errorf(pgerror.NumericValueOutOfRange, "the negation of %s is out of range for type %s", what, t.Name())
		}
		v.i = -v.i
	case floatValue:
		v.f = -v.f
	case numericValue:
		switch v.num.kind {
		case numericPosInf:
			v.num.kind = numericNegInf
		case numericNegInf:
			v.num.kind = numericPosInf
		case numericFinite:
			v.num.neg = !v.num.neg && v.num.digits != ""
		}
	}
	return v, nil
}

// castValue converts v, of a type ranked at most c's, to numeric type c,
// as PostgreSQL's implicit casts do: an integer to numeric exactly, to
// real or double precision rounded; a numeric to real or double precision
// correctly rounded (22003 where it rounds to an infinity or to zero); a
// real widened to double precision exactly.
func castValue(v value, c pgtypes.OID, what subject) (value, error) {
	switch {
	case c == pgtypes.Numeric && v.kind == intValue:
		return value{kind: numericValue, num: integerNumeric(v.i)}, nil
	case c == pgtypes.Float4 && v.kind == intValue:
		return value{kind: floatValue, f: float64(float32(v.i))}, nil
	case c == pgtypes.Float8 && v.kind == intValue:
		return value{kind: floatValue, f: float64(v.i)}, nil
	case (c == pgtypes.Float4 || c == pgtypes.Float8) && v.kind == numericValue:
		bits := 64
		if c == pgtypes.Float4 {
			bits = 32
		}
		f, err := v.num.float(bits, what)
		return value{kind: floatValue, f: f}, err
	}
	return v, nil
}

// integerNumeric is n as a numeric.
func integerNumeric(n int64) numeric {
	num, _ := readNumeric(strconv.FormatInt(n, 10), subject{})
	return num
}

// asFloat is a number as double precision, as PostgreSQL converts one
// compared with a double precision column.
func asFloat(v value, what subject) (float64, error) {
	switch v.kind {
	case intValue:
		return float64(v.i), nil
	case numericValue:
		return v.num.float(64, what)
	}
	return v.f, nil
}

// pgFloatCompare orders doubles as PostgreSQL does: NaN equal to NaN and
// above every other value, -0 equal to 0.
func pgFloatCompare(a, b float64) int {
	switch an, bn := math.IsNaN(a), math.IsNaN(b); {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
