package planner

import (
	"math"
	"regexp"
	"strconv"

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

// plainDecimal is a number whose text a cast to text keeps as written.
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
	case textTypes[src] && (textTypes[t] || numberTypes[t]):
		o.typ = t // text to a number is the number's input function
	case numberTypes[src] && textTypes[t]:
		if src == pgtypes.Float4 || src == pgtypes.Float8 || (!o.unbound && !plainDecimal.MatchString(o.text)) {
			return pgerror.Errorf(pgerror.FeatureNotSupported, "a cast of %s from %s to %s is not supported: write the text in quotes", o.name(), src.Name(), typName)
		}
		o.typ = t
	case numberTypes[src] && numberTypes[t]:
		if integerBits[t] > 0 && integerBits[src] == 0 && !o.unbound {
			return p.roundToInteger(o, t)
		}
		o.typ = t
	default:
		return pgerror.Errorf(pgerror.FeatureNotSupported, "a cast of %s from %s to %s is not supported", o.name(), src.Name(), typName)
	}
	return nil
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
