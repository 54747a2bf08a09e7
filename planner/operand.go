package planner

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/xwb1989/sqlparser"

	"countwall/pgerror"
	"countwall/pgtypes"
)

// operand is a constant a condition compares a column with, typed as
// PostgreSQL types it before it chooses the comparison: a number in the
// text is an integer (integer when it fits 32 bits, bigint when 64) or a
// numeric, a quoted string is unknown, and a parameter has the type its
// client declared or, left unspecified, the type its first use gave it
// (unknown until then). An unknown operand takes the type its use gives
// it (the column's, or an IN list's common type) and is read by that
// type's input function.
type operand struct {
	typ   pgtypes.OID
	text  string // the number, the string, or the bound value
	param int    // n of $n; 0 for a constant written in the text
	sign  byte   // '-' or '+' written before a string or a parameter, or 0
	// unbound marks a parameter read while the statement is described,
	// before its value is known.
	unbound bool
	// null marks NULL, written or bound: a comparison with it is unknown
	// for every row (threevalued.go), once its types are checked.
	null bool
}

// operandOf reads the constant side of a condition on column col.
func (p *parser) operandOf(e sqlparser.Expr, col string) (operand, error) {
	var sign byte
	if u, ok := e.(*sqlparser.UnaryExpr); ok {
		switch u.Operator {
		case sqlparser.UMinusStr:
			sign = '-'
		case sqlparser.UPlusStr:
			sign = '+'
		default:
			return operand{}, pgerror.Errorf(pgerror.FeatureNotSupported, "operator %s is not supported on values", u.Operator)
		}
		e = u.Expr
	}
	switch v := e.(type) {
	case *sqlparser.FuncExpr:
		if v.Name.Lowered() == castCall {
			o, err := p.castOperand(v, col)
			if err != nil {
				return operand{}, err
			}
			if sign != 0 {
				o.sign = sign
			}
			return p.signed(o)
		}
	case *sqlparser.NullVal:
		return p.signed(operand{typ: pgtypes.Unknown, null: true, sign: sign})
	case sqlparser.BoolVal:
		return operand{}, pgerror.Errorf(pgerror.DatatypeMismatch, "boolean values are not supported (column %q)", col)
	case *sqlparser.SQLVal:
		switch v.Type {
		case sqlparser.ValArg:
			return p.paramOperand(string(v.Val), sign)
		case sqlparser.StrVal:
			return p.signed(operand{typ: pgtypes.Unknown, text: string(v.Val), sign: sign})
		case sqlparser.IntVal, sqlparser.FloatVal:
			return numberOperand(string(v.Val), v.Type == sqlparser.IntVal, sign), nil
		}
	}
	return operand{}, pgerror.Errorf(pgerror.FeatureNotSupported, "only constant values may be compared with column %q", col)
}

// numberOperand is a number written in the text, its sign folded in: an
// integer of 32 or 64 bits when it fits, else a numeric.
func numberOperand(text string, integer bool, sign byte) operand {
	if sign == '-' {
		if t, ok := strings.CutPrefix(text, "-"); ok {
			text = t
		} else {
			text = "-" + text
		}
	}
	o := operand{typ: pgtypes.Numeric, text: text}
	if integer {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			o.typ = pgtypes.Int8
			if n >= math.MinInt32 && n <= math.MaxInt32 {
				o.typ = pgtypes.Int4
			}
		}
	}
	return o
}

// paramOperand is parameter $n (the parser's :vN), with its bound value.
func (p *parser) paramOperand(name string, sign byte) (operand, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, ":v"))
	if err != nil || n < 1 {
		return operand{}, pgerror.Errorf(pgerror.SyntaxError, "bad parameter placeholder")
	}
	for len(p.paramTypes) < n {
		p.paramTypes = append(p.paramTypes, pgtypes.Unspecified)
	}
	o := operand{typ: p.paramType(n), param: n, sign: sign, unbound: !p.bind}
	if p.bind {
		arg := p.args[n-1]
		if arg == nil {
			o.null = true
		} else {
			o.text = *arg
		}
	}
	return p.signed(o)
}

// paramType is the type of $n: as declared, else as its first use gave
// it, else unknown.
func (p *parser) paramType(n int) pgtypes.OID {
	if n <= len(p.declared) && !p.declared[n-1].Inferred() {
		return p.declared[n-1]
	}
	if t := p.paramTypes[n-1]; t != pgtypes.Unspecified {
		return t
	}
	return pgtypes.Unknown
}

// settle gives an unknown operand type t, and, when it is a parameter
// whose type is not yet known, makes t its type for its later uses and
// for the client's ParameterDescription.
func (p *parser) settle(o *operand, t pgtypes.OID) {
	if o.typ != pgtypes.Unknown {
		return
	}
	o.typ = t
	if o.param > 0 && p.paramTypes[o.param-1] == pgtypes.Unspecified {
		p.paramTypes[o.param-1] = t
	}
}

// signed applies a sign written before a string or a parameter, as
// PostgreSQL resolves a prefix operator: a number type keeps its type
// (the value is negated when read), unknown + is double precision (the
// one + PostgreSQL prefers), unknown - is ambiguous (42725), and any
// other type has no such operator (42883).
func (p *parser) signed(o operand) (operand, error) {
	switch {
	case o.sign == 0 || numberTypes[o.typ]:
		return o, nil
	case o.typ == pgtypes.Unknown && o.sign == '+':
		p.settle(&o, pgtypes.Float8)
		return o, nil
	case o.typ == pgtypes.Unknown:
		return operand{}, pgerror.Errorf(pgerror.AmbiguousFunction, "operator is not unique: - unknown (a minus sign before %s, whose type is not known)", o.name())
	}
	return operand{}, pgerror.Errorf(pgerror.UndefinedFunction, "operator does not exist: %c %s (a sign before %s)", o.sign, o.typ.Name(), o.name())
}

// name is how messages name the operand: "parameter $2", "the value".
func (o operand) name() string {
	if o.param > 0 {
		return fmt.Sprintf("parameter $%d", o.param)
	}
	return "the value"
}

// what names the operand in the errors of reading it for column col.
func (o operand) what(col string) subject { return subject{param: o.param, col: col} }

// subject names a value in the errors of the input functions that read
// it: "parameter $2 compared with column "age"". It is a String method,
// not a string, so that the text is built only when an error is.
type subject struct {
	param int    // n of $n; 0 for a constant written in the text
	col   string // the column the value is compared with
	text  string // or, when set, how the analyst wrote it: '3000000000', $2
}

func (s subject) String() string {
	if s.text != "" {
		return s.text
	}
	return fmt.Sprintf("%s compared with column %q", operand{param: s.param}.name(), s.col)
}

// read reads the operand, whose type is settled, by its type's input
// function, and applies its sign. An unbound parameter reads as a
// placeholder of its type.
func (o operand) read(col string) (value, error) { return o.readNamed(o.what(col)) }

// readNamed is read, its errors naming the operand as what says.
func (o operand) readNamed(what subject) (value, error) {
	if o.unbound {
		return placeholderValue(o.typ), nil
	}
	v, err := readValue(o.text, o.typ, what)
	if err != nil || o.sign != '-' {
		return v, err
	}
	return negate(v, o.typ, what)
}

// placeholderValue is a valid value of type t.
func placeholderValue(t pgtypes.OID) value {
	switch {
	case integerBits[t] > 0:
		return value{kind: intValue}
	case t == pgtypes.Numeric:
		return value{kind: numericValue}
	case t == pgtypes.Float4 || t == pgtypes.Float8:
		return value{kind: floatValue}
	}
	return value{kind: textValue}
}
