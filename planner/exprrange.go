package planner

import (
	"countwall/ir"
	"countwall/pgerror"
	"fmt"
	"math"
	"math/big"
)

// PostgreSQL raises an error on the row that makes an expression overflow,
// divide by zero or underflow; SQLite answers NULL, a real, or (for
// abs(-9223372036854775808)) an error without a code. Either way a single
// row could decide whether a statement fails, which would let an analyst
// test for one person's value through the error. So every expression is
// checked total before the read: its range is derived by interval
// arithmetic from the range its column may take (an integer column's
// declared domain {min, max}, else all of bigint; a real column's finite
// doubles; a text of up to maxTextLength characters), and an expression
// that could fail for some value in that range is refused with the SQLSTATE
// PostgreSQL would give. The rendered SQL makes every row outside that
// range NULL (ir.MathCompare.Guard), so no row reaches an error. Whether a
// statement is refused depends on the statement and the config alone.

// maxTextLength bounds what length() returns: a PostgreSQL text holds at
// most 1 GB, and SQLite's longest string (SQLITE_MAX_LENGTH) is 10^9 bytes;
// length counts characters, never more than the bytes.
const maxTextLength = 1<<30 - 1

// intSpan is the closed interval a term's integer values lie in.
type intSpan struct{ lo, hi int64 }

// floatSpan is the closed interval a term's doubles lie in, and tiny, the
// least magnitude a nonzero value among them can have: more than the
// interval tells when they are whole numbers (round(age) is never 0.5), so
// that round(age) * 0.5 is not refused for an underflow it cannot reach.
type floatSpan struct{ lo, hi, tiny float64 }

// span is what the check knows of a numeric term's values: integers for an
// integer term, doubles for a double precision one.
type span struct {
	isFloat bool
	ints    intSpan
	floats  floatSpan
}

func intsSpan(lo, hi int64) span { return span{ints: intSpan{lo, hi}} }
func floatsSpan(lo, hi float64) span {
	return span{isFloat: true, floats: floatSpan{lo, hi, math.SmallestNonzeroFloat64}}
}

// wholeSpan is a span of doubles that are whole numbers.
func wholeSpan(lo, hi float64) span { return span{isFloat: true, floats: floatSpan{lo, hi, 1}} }
func bigInt(n int64) *big.Int       { return big.NewInt(n) }

// convertedToFloat is the span cast to double precision, as PostgreSQL
// casts an integer operand of double precision arithmetic (and SQLite
// converts it): monotone, so the ends go to the ends.
func (s span) convertedToFloat() floatSpan {
	if s.isFloat {
		return s.floats
	}
	return floatSpan{float64(s.ints.lo), float64(s.ints.hi), 1}
}

// constantSpan is the one value of a number constant.
func constantSpan(l ir.Literal) span {
	if l.Kind == ir.LitInt {
		return intsSpan(l.Int, l.Int)
	}
	return span{isFloat: true, floats: floatSpan{l.Float, l.Float, math.Max(math.Abs(l.Float), math.SmallestNonzeroFloat64)}}
}

// columnSpan is the range a column's values are checked over, and the range
// the rendered SQL keeps (columnGuard). A text column has none: it is only
// measured by length.
func columnSpan(col *ir.Column) (span, bool) {
	switch col.Type {
	case ir.TypeInt:
		if d := col.Domain; d != nil && d.IsRange {
			return intsSpan(d.Min, d.Max), true
		}
		return intsSpan(math.MinInt64, math.MaxInt64), true
	case ir.TypeReal:
		return floatsSpan(-math.MaxFloat64, math.MaxFloat64), true
	}
	return span{}, false
}

// columnGuard is the condition on the column under which the checked
// expression is computed, nil for a text column.
func columnGuard(col *ir.Column) *ir.Between {
	s, ok := columnSpan(col)
	switch {
	case !ok:
		return nil
	case s.isFloat:
		return &ir.Between{Column: col.Name, Lo: ir.Literal{Kind: ir.LitFloat, Float: s.floats.lo}, Hi: ir.Literal{Kind: ir.LitFloat, Float: s.floats.hi}}
	}
	return &ir.Between{Column: col.Name, Lo: integerConstant(s.ints.lo), Hi: integerConstant(s.ints.hi)}
}

// totality checks one expression over the range of its column.
type totality struct {
	table  *ir.Table
	column *ir.Column
}

// checkTotal refuses t when some value of its column's range makes it fail.
func (p *parser) checkTotal(t *mathTerm) error {
	_, err := totality{table: p.table, column: p.table.Columns[t.columnName()]}.span(t)
	return err
}

// span derives t's span from its operands', refusing t when some value in
// them makes it fail.
func (c totality) span(t *mathTerm) (span, error) {
	switch e := t.expr.(type) {
	case *ir.ColumnRef:
		s, _ := columnSpan(c.column)
		return s, nil
	case *ir.NumberLit:
		return constantSpan(e.Value), nil
	case *ir.BinaryExpr:
		l, err := c.span(t.args[0])
		if err != nil {
			return span{}, err
		}
		r, err := c.span(t.args[1])
		if err != nil {
			return span{}, err
		}
		return c.arithmetic(t, e.Op, l, r)
	case *ir.FuncCall:
		switch e.Name {
		case "length":
			return intsSpan(0, maxTextLength), nil
		case "lower", "upper":
			return span{}, nil // text: its length is what is measured
		}
		arg, err := c.span(t.args[0])
		if err != nil {
			return span{}, err
		}
		return c.function(t, e.Name, arg)
	}
	return span{}, pgerror.Errorf(pgerror.FeatureNotSupported, "this expression is not supported in conditions")
}

// arithmetic is the span of l op r for a term of type t.typ.
func (c totality) arithmetic(t *mathTerm, op string, l, r span) (span, error) {
	if t.typ == typeFloat8 {
		s, failure := floatArithmetic(op, l.convertedToFloat(), r.convertedToFloat())
		switch failure {
		case overflows:
			return span{}, c.overflow(t)
		case underflows:
			return span{}, c.underflow(t)
		case dividesByZero:
			return span{}, c.zeroDivisor(t)
		}
		return span{isFloat: true, floats: s}, nil
	}
	lo, hi, zeroDivisor := intArithmetic(op, l.ints, r.ints)
	if zeroDivisor {
		return span{}, c.zeroDivisor(t)
	}
	return c.fitted(t, lo, hi)
}

// function is the span of an allowed numeric function of a term of span a.
func (c totality) function(t *mathTerm, name string, a span) (span, error) {
	if name == "abs" && !a.isFloat {
		lo, hi := intAbs(a.ints)
		return c.fitted(t, lo, hi)
	}
	f := a.convertedToFloat()
	switch name {
	case "abs":
		return span{isFloat: true, floats: floatAbs(f)}, nil
	case "round":
		return wholeSpan(math.RoundToEven(f.lo), math.RoundToEven(f.hi)), nil
	case "floor":
		return wholeSpan(math.Floor(f.lo), math.Floor(f.hi)), nil
	}
	return wholeSpan(math.Ceil(f.lo), math.Ceil(f.hi)), nil // ceil
}

// fitted is [lo, hi] as the span of integer term t, or the overflow that
// refuses t when it does not fit t's type.
func (c totality) fitted(t *mathTerm, lo, hi *big.Int) (span, error) {
	min, max := t.typ.integerLimits()
	if lo.Cmp(big.NewInt(min)) < 0 || hi.Cmp(big.NewInt(max)) > 0 {
		return span{}, c.overflow(t)
	}
	return intsSpan(lo.Int64(), hi.Int64()), nil
}

// intArithmetic is the exact range of l op r for l in a and r in b, with
// PostgreSQL's truncating / and %; zeroDivisor when b holds 0 for / or %.
func intArithmetic(op string, a, b intSpan) (lo, hi *big.Int, zeroDivisor bool) {
	switch op {
	case "+":
		return new(big.Int).Add(bigInt(a.lo), bigInt(b.lo)), new(big.Int).Add(bigInt(a.hi), bigInt(b.hi)), false
	case "-":
		return new(big.Int).Sub(bigInt(a.lo), bigInt(b.hi)), new(big.Int).Sub(bigInt(a.hi), bigInt(b.lo)), false
	case "*":
		lo, hi = corners(a, b, (*big.Int).Mul)
		return lo, hi, false
	}
	if b.lo <= 0 && b.hi >= 0 {
		return nil, nil, true
	}
	if op == "/" {
		// Truncated division is monotone in each operand while the divisor
		// keeps its sign, so the extremes lie at the corners.
		lo, hi = corners(a, b, (*big.Int).Quo)
		return lo, hi, false
	}
	lo, hi = remainderRange(a, b)
	return lo, hi, false
}

// corners is the least and greatest of f over the four corners of a x b.
func corners(a, b intSpan, f func(z, x, y *big.Int) *big.Int) (lo, hi *big.Int) {
	for _, x := range []int64{a.lo, a.hi} {
		for _, y := range []int64{b.lo, b.hi} {
			v := f(new(big.Int), bigInt(x), bigInt(y))
			if lo == nil || v.Cmp(lo) < 0 {
				lo = v
			}
			if hi == nil || v.Cmp(hi) > 0 {
				hi = v
			}
		}
	}
	return lo, hi
}

// remainderRange bounds x % y for x in a and y in b, b without 0: the sign
// is x's, the magnitude below |y| and at most |x|. Of two constants it is
// their remainder.
func remainderRange(a, b intSpan) (lo, hi *big.Int) {
	if a.lo == a.hi && b.lo == b.hi {
		r := new(big.Int).Rem(bigInt(a.lo), bigInt(b.lo))
		return r, r
	}
	m := new(big.Int).Abs(bigInt(b.lo))
	if h := new(big.Int).Abs(bigInt(b.hi)); h.Cmp(m) > 0 {
		m = h
	}
	m.Sub(m, big.NewInt(1)) // the largest |x % y|
	lo, hi = big.NewInt(0), big.NewInt(0)
	if a.lo < 0 {
		lo = maxBig(bigInt(a.lo), new(big.Int).Neg(m))
	}
	if a.hi > 0 {
		hi = minBig(bigInt(a.hi), m)
	}
	return lo, hi
}

// intAbs is the exact range of abs(x) for x in a (its end may be 2^63,
// which bigint cannot hold).
func intAbs(a intSpan) (lo, hi *big.Int) {
	l, h := bigInt(a.lo), bigInt(a.hi)
	switch {
	case a.lo >= 0:
		return l, h
	case a.hi <= 0:
		return h.Neg(h), l.Neg(l)
	}
	return big.NewInt(0), maxBig(l.Neg(l), h)
}

func minBig(x, y *big.Int) *big.Int {
	if x.Cmp(y) < 0 {
		return x
	}
	return y
}

func maxBig(x, y *big.Int) *big.Int {
	if x.Cmp(y) > 0 {
		return x
	}
	return y
}

// floatFailure is how double precision arithmetic can fail in PostgreSQL.
type floatFailure int

const (
	noFailure     floatFailure = iota
	overflows                  // a finite result rounds to an infinity
	underflows                 // a product or quotient of nonzero values rounds to zero
	dividesByZero              // the divisor can be zero
)

// floatArithmetic is the span of l op r for l in a and r in b, computed as
// PostgreSQL's float8 operators compute (IEEE double arithmetic, rounded to
// nearest, which is monotone: each extreme lies at a corner), and the way
// the operator can fail for some l and r.
func floatArithmetic(op string, a, b floatSpan) (floatSpan, floatFailure) {
	s := floatSpan{tiny: math.SmallestNonzeroFloat64} // a sum can come as near zero as a double can
	underflow := false
	switch op {
	case "+":
		s.lo, s.hi = float64(a.lo+b.lo), float64(a.hi+b.hi)
	case "-":
		s.lo, s.hi = float64(a.lo-b.hi), float64(a.hi-b.lo)
	case "*":
		s.lo, s.hi = floatCorners(a, b, func(x, y float64) float64 { return float64(x * y) })
		x, y := a.smallestNonzero(), b.smallestNonzero()
		s.tiny = math.Max(s.tiny, float64(x*y))
		underflow = x > 0 && y > 0 && float64(x*y) == 0
	case "/":
		if b.lo <= 0 && b.hi >= 0 {
			return floatSpan{}, dividesByZero
		}
		s.lo, s.hi = floatCorners(a, b, func(x, y float64) float64 { return float64(x / y) })
		x := a.smallestNonzero()
		s.tiny = math.Max(s.tiny, float64(x/b.largestMagnitude()))
		underflow = x > 0 && float64(x/b.largestMagnitude()) == 0
	}
	switch {
	case math.IsInf(s.lo, 0) || math.IsInf(s.hi, 0):
		return floatSpan{}, overflows
	case underflow:
		return floatSpan{}, underflows
	}
	return s, noFailure
}

// floatCorners is the least and greatest of f over the corners of a x b.
func floatCorners(a, b floatSpan, f func(x, y float64) float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range []float64{a.lo, a.hi} {
		for _, y := range []float64{b.lo, b.hi} {
			v := f(x, y)
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return lo, hi
}

// smallestNonzero is the least magnitude a nonzero double in s can have,
// 0 when s holds zero alone.
func (s floatSpan) smallestNonzero() float64 {
	switch {
	case s.lo == 0 && s.hi == 0:
		return 0
	case s.lo > 0:
		return math.Max(s.lo, s.tiny)
	case s.hi < 0:
		return math.Max(-s.hi, s.tiny)
	}
	return s.tiny
}

// largestMagnitude is the greatest magnitude of a double in s.
func (s floatSpan) largestMagnitude() float64 { return math.Max(math.Abs(s.lo), math.Abs(s.hi)) }

// floatAbs is the span of abs(x) for x in s.
func floatAbs(s floatSpan) floatSpan {
	switch {
	case s.lo >= 0:
		return s
	case s.hi <= 0:
		return floatSpan{-s.hi, -s.lo, s.tiny}
	}
	return floatSpan{0, s.largestMagnitude(), s.tiny}
}

// overflow refuses t, whose value can leave its type's range.
func (c totality) overflow(t *mathTerm) error {
	if t.columns() == 0 {
		return pgerror.Errorf(pgerror.NumericValueOutOfRange, "%s is out of range for type %s", t.text, t.typ)
	}
	return pgerror.Errorf(pgerror.NumericValueOutOfRange, "%s could overflow %s for some value of %s%s", t.text, t.typ, c.column.Name, c.remedy())
}

// underflow refuses t, a product or quotient that can round to zero.
func (c totality) underflow(t *mathTerm) error {
	return pgerror.Errorf(pgerror.NumericValueOutOfRange,
		"%s could underflow double precision for some value of %s: PostgreSQL refuses a nonzero product or quotient that rounds to zero%s",
		t.text, c.column.Name, c.remedy())
}

// zeroDivisor refuses t, a division or remainder whose divisor can be zero.
func (c totality) zeroDivisor(t *mathTerm) error {
	divisor := t.args[1]
	if divisor.columns() == 0 {
		return pgerror.Errorf(pgerror.DivisionByZero, "division by zero")
	}
	return pgerror.Errorf(pgerror.DivisionByZero, "%s could divide by zero: %s is zero for some value of %s%s", t.text, divisor.text, c.column.Name, c.remedy())
}

// remedy says, after a refusal, over which range the expression was checked
// and what the analyst or the data owner can do.
func (c totality) remedy() string {
	col := c.column
	key := fmt.Sprintf("tables.%s.domains.%s", c.table.Name, col.Name)
	switch {
	case col.Type == ir.TypeInt && col.Domain != nil && col.Domain.IsRange:
		return fmt.Sprintf(" in its declared range %d to %d; change the expression, or narrow %s", col.Domain.Min, col.Domain.Max, key)
	case col.Type == ir.TypeInt:
		return fmt.Sprintf("; declare the column's range in %s ({min: ..., max: ...})", key)
	case col.Type == ir.TypeReal:
		return " (a real column may hold any finite double precision value); change the expression"
	}
	return fmt.Sprintf(" (a text may hold up to %d characters); change the expression", maxTextLength)
}
