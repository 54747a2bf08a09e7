package snapshot

import (
	"cmp"
	"math"
	"strings"

	"countwall/ir"
)

// A stored value as the snapshot keeps it, and SQLite's rules for it: the
// order of storage classes and values, exact comparison of integers with
// reals, a column's affinity and the literals compared with it unconverted.

// valueClass is a SQLite storage class, in SQLite's sort order.
type valueClass uint8

const (
	classNull valueClass = iota
	classInt
	classReal
	classText
	classBlob
)

// dictValue is one distinct stored value of a column.
type dictValue struct {
	class valueClass
	i     int64
	f     float64
	s     string // text, or the bytes of a blob
}

// compareDict orders values as SQLite's ORDER BY does with the BINARY
// collation: NULL, then numbers by value, then text bytewise, then blobs.
// Integers and reals compare exactly.
func compareDict(a, b dictValue) int {
	an, bn := a.class == classInt || a.class == classReal, b.class == classInt || b.class == classReal
	switch {
	case an && bn:
		return compareNumbers(a, b)
	case a.class == classNull || b.class == classNull:
		return cmp.Compare(a.class, b.class)
	case an != bn:
		if an {
			return -1
		}
		return 1
	case a.class != b.class:
		return cmp.Compare(a.class, b.class)
	}
	return strings.Compare(a.s, b.s)
}

// compareNumbers compares two numeric values exactly, as SQLite does for an
// integer against a real.
func compareNumbers(a, b dictValue) int {
	switch {
	case a.class == classInt && b.class == classInt:
		return cmp.Compare(a.i, b.i)
	case a.class == classReal && b.class == classReal:
		return cmp.Compare(a.f, b.f)
	case a.class == classInt:
		return compareIntReal(a.i, b.f)
	default:
		return -compareIntReal(b.i, a.f)
	}
}

// compareIntReal compares an integer with a (non-NaN) real without the
// rounding of a float64 conversion.
func compareIntReal(i int64, f float64) int {
	const two63 = 9223372036854775808.0
	switch {
	case f < -two63:
		return 1
	case f >= two63:
		return -1
	}
	t := int64(f) // truncated toward zero, exact for |f| < 2^63
	if c := cmp.Compare(i, t); c != 0 {
		return c
	}
	return cmp.Compare(float64(t), f) // i == trunc(f): only the fraction is left
}

func isNumber(v dictValue) bool { return v.class == classInt || v.class == classReal }

// any is the value as the SQLite driver returns it.
func (v dictValue) any() any {
	switch v.class {
	case classNull:
		return nil
	case classInt:
		return v.i
	case classReal:
		return v.f
	case classText:
		return v.s
	}
	return []byte(v.s)
}

// affinity is a column's SQLite type affinity (https://sqlite.org/datatype3.html, 3.1),
// which decides how a literal compared with it is converted.
type affinity uint8

const (
	affinityBlob affinity = iota // none
	affinityText
	affinityNumeric // INTEGER, REAL and NUMERIC alike for comparisons
)

func affinityOf(decl string) affinity {
	d := strings.ToUpper(decl)
	switch {
	case strings.Contains(d, "INT"):
		return affinityNumeric
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"):
		return affinityText
	case strings.Contains(d, "BLOB"), d == "":
		return affinityBlob
	}
	return affinityNumeric // REAL, FLOA, DOUB and everything else is NUMERIC or REAL
}

// literalFor converts a literal to the value SQLite compares the column's
// values with. Only the pairs where SQLite applies no conversion to the
// literal are accepted: a number against a column of numeric affinity, text
// against a column of text or no affinity. Elsewhere SQLite's conversions
// decide, so SQLite answers: a decision made from the statement and the
// schema alone. Text stored in a column of numeric affinity needs no care:
// SQLite converts text that reads as a number when it is stored, with the
// same conversion it applies when comparing, so text that is still text
// compares as text, after every number, here as there.
func literalFor(c *snapColumn, l ir.Literal) (dictValue, bool) {
	switch {
	case c.affinity == affinityNumeric && l.Kind == ir.LitInt:
		return dictValue{class: classInt, i: l.Int}, true
	case c.affinity == affinityNumeric && l.Kind == ir.LitFloat:
		if math.IsNaN(l.Float) {
			return dictValue{}, false
		}
		return dictValue{class: classReal, f: l.Float}, true
	case c.affinity != affinityNumeric && l.Kind == ir.LitText:
		return dictValue{class: classText, s: l.Text}, true
	}
	return dictValue{}, false
}
