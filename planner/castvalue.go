package planner

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/xwb1989/sqlparser"

	"countwall/pgerror"
	"countwall/pgtypes"
)

// castOperand reads x::type or CAST(x AS type) on a constant or a
// parameter, as PostgreSQL's explicit cast reads it: a quoted constant, or
// a parameter of no declared type, is read by the type's input function
// (and the parameter takes the type, for the client's
// ParameterDescription); a value of a type already known is converted.
// varchar(n) and character(n) cut the value to n characters, as an
// explicit cast does.
func (p *parser) castOperand(f *sqlparser.FuncExpr, col string) (operand, error) {
	inner, typName := castArgs(f)
	for {
		paren, ok := inner.(*sqlparser.ParenExpr)
		if !ok {
			break
		}
		inner = paren.Expr
	}
	t, limit, err := castType(typName)
	if err != nil {
		return operand{}, err
	}
	if inner == nil || !isLiteral(inner) {
		return operand{}, pgerror.Errorf(pgerror.FeatureNotSupported, "a cast to %s is supported on a constant, a parameter or a column", typName)
	}
	o, err := p.operandOf(inner, col)
	if err != nil {
		return operand{}, err
	}
	if err := p.convert(&o, t, typName); err != nil {
		return operand{}, err
	}
	if limit > 0 && !o.unbound && !o.null {
		o.text = clipChars(o.text, limit)
	}
	return o, nil
}

// plainDecimal is a number whose text a cast to text keeps, leading zeros
// aside.
var plainDecimal = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// convert casts o to type t.
func (p *parser) convert(o *operand, t pgtypes.OID, typName string) error {
	src := o.typ
	switch {
	case o.null && src == pgtypes.Unknown:
		p.settle(o, t)
	case o.null:
		o.typ = t // NULL casts to any type as NULL
	case src == pgtypes.Unknown:
		p.settle(o, t)
	case src == t:
	case textTypes[src] && textTypes[t]:
		if !o.unbound {
			// character loses its padding, name and "char" are cut.
			v, err := readValue(o.text, src, subject{text: o.name()})
			if err != nil {
				return err
			}
			o.text = v.s
		}
		o.typ = t
	case textTypes[src] && numberTypes[t]:
		o.typ = t // text to a number is the number's input function
	case numberTypes[src] && textTypes[t]:
		return p.numberToText(o, t, typName)
	case numberTypes[src] && numberTypes[t]:
		switch {
		case o.unbound:
		case integerBits[t] > 0 && integerBits[src] == 0:
			return p.roundToInteger(o, t)
		case (src == pgtypes.Float4 || src == pgtypes.Float8) && (t == pgtypes.Float8 || t == pgtypes.Numeric):
			return floatToNumber(o, t)
		}
		o.typ = t
	default:
		return pgerror.Errorf(pgerror.FeatureNotSupported, "a cast of %s from %s to %s is not supported", o.name(), src.Name(), typName)
	}
	return nil
}

// floatToNumber casts a real to double precision, which keeps its binary
// value (0.1::real is 0.10000000149011612 as a double), or a real or a
// double to numeric, which keeps the 6 or 15 significant digits
// PostgreSQL's cast keeps.
func floatToNumber(o *operand, t pgtypes.OID) error {
	v, err := readValue(o.text, o.typ, subject{text: o.name()})
	if err != nil {
		return err
	}
	switch {
	case math.IsInf(v.f, 0) || math.IsNaN(v.f):
		o.text = strconv.FormatFloat(v.f, 'g', -1, 64) // +Inf, -Inf, NaN
	case t == pgtypes.Float8:
		o.text = strconv.FormatFloat(v.f, 'g', -1, 64)
	case o.typ == pgtypes.Float4:
		o.text = strconv.FormatFloat(v.f, 'g', 6, 64)
	default:
		o.text = strconv.FormatFloat(v.f, 'g', 15, 64)
	}
	o.typ = t
	return nil
}

// numberToText casts an integer or a numeric to a text type: the text is
// the number's output, as PostgreSQL writes it (007 is 7).
func (p *parser) numberToText(o *operand, t pgtypes.OID, typName string) error {
	src := o.typ
	switch {
	case o.unbound:
	case integerBits[src] > 0:
		v, err := readValue(o.text, src, subject{text: o.name()})
		if err != nil {
			return err
		}
		o.text = strconv.FormatInt(v.i, 10)
	case src == pgtypes.Numeric && plainDecimal.MatchString(o.text):
		o.text = canonicalDecimal(o.text)
	default:
		return pgerror.Errorf(pgerror.FeatureNotSupported, "a cast of %s from %s to %s is not supported: write the text in quotes", o.name(), src.Name(), typName)
	}
	o.typ = t
	return nil
}

// canonicalDecimal is a plain decimal as numeric's output writes it: no
// leading zeros but the one before a point, no sign on zero.
func canonicalDecimal(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(strings.TrimPrefix(s, "-"), "0")
	if s == "" || s[0] == '.' {
		s = "0" + s
	}
	if neg && strings.Trim(s, "0.") != "" {
		s = "-" + s
	}
	return s
}

// roundToInteger casts a numeric or a double to an integer type: numeric
// rounds half away from zero, a double to the nearest even, and a value
// outside the type's range is 22003.
func (p *parser) roundToInteger(o *operand, t pgtypes.OID) error {
	what := subject{text: o.name()}
	v, err := readValue(o.text, o.typ, what)
	if err != nil {
		return err
	}
	var f float64
	switch v.kind {
	case intValue:
		f = float64(v.i)
	case floatValue:
		f = math.RoundToEven(v.f)
	default:
		if v.num.kind != numericFinite {
			return pgerror.Errorf(pgerror.FeatureNotSupported, "cannot convert %s to %s: it is not a finite number", o.name(), t.Name())
		}
		if f, err = strconv.ParseFloat(v.num.text(), 64); err != nil {
			return pgerror.Errorf(pgerror.NumericValueOutOfRange, "%s is out of range for type %s", o.name(), t.Name())
		}
		f = math.Round(f)
	}
	bits := integerBits[t]
	if math.IsNaN(f) || f < -math.Ldexp(1, bits-1) || f >= math.Ldexp(1, bits-1) {
		return pgerror.Errorf(pgerror.NumericValueOutOfRange, "%s is out of range for type %s", o.name(), t.Name())
	}
	o.typ, o.text = t, strconv.FormatInt(int64(f), 10)
	return nil
}

// clipChars is s cut to n characters.
func clipChars(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// assign casts o to the type t of parameter $n as PostgreSQL's assignment
// cast does: a constant of unknown type (a quoted one, NULL) takes t and
// is read by its input function when bound; a number to a number type or
// to a text type, and text to a text type, are cast; any other pair has no
// assignment cast (42804).
func (p *parser) assign(o *operand, t pgtypes.OID, n int) error {
	src := o.typ
	if !(o.null || src == pgtypes.Unknown || src == t || (numberTypes[src] && (numberTypes[t] || textTypes[t])) || (textTypes[src] && textTypes[t])) {
		return pgerror.Errorf(pgerror.DatatypeMismatch, "parameter $%d of type %s cannot be coerced to the expected type %s", n, src.Name(), t.Name()).
			WithHint("You will need to rewrite or cast the expression.")
	}
	if src == t || (src == pgtypes.Unknown && !o.null) {
		o.typ = t
		return nil
	}
	return p.convert(o, t, t.Name())
}

// foldSign applies a number's sign to its text, which then holds the
// value with the sign applied, in the type's input syntax.
func foldSign(o *operand) error {
	if o.sign != '-' || o.null || !numberTypes[o.typ] {
		o.sign = 0
		return nil
	}
	v, err := o.readNamed(subject{text: "the value"}) // negated
	o.sign = 0
	switch {
	case err != nil:
		return err
	case v.kind == intValue:
		o.text = strconv.FormatInt(v.i, 10)
	case v.kind == floatValue:
		o.text = strconv.FormatFloat(v.f, 'g', -1, 64)
	case plainDecimal.MatchString(o.text):
		// A plain decimal keeps its digits (its scale, for a cast to text).
		o.text = canonicalDecimal(pick(strings.HasPrefix(o.text, "-"), o.text[1:], "-"+o.text))
	default:
		o.text = v.num.text()
	}
	return nil
}
