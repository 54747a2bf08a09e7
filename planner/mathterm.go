package planner

import (
	"countwall/ir"
	"countwall/pgerror"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/xwb1989/sqlparser"
)

// mathTerm is one node of an arithmetic condition as the planner reads it:
// its IR, its PostgreSQL type, the text the analyst wrote (for messages,
// with a parameter named $n, never by its value), and its operands.
type mathTerm struct {
	expr   ir.Expr
	typ    mathType
	text   string
	column string      // set on a column reference
	args   []*mathTerm // the operands of arithmetic, the argument of a function
}

// columns counts the column references in t.
func (t *mathTerm) columns() int {
	n := 0
	if t.column != "" {
		n++
	}
	for _, a := range t.args {
		n += a.columns()
	}
	return n
}

// columnName is the column t refers to, "" when it refers to none (the
// first one when it refers to several).
func (t *mathTerm) columnName() string {
	if t.column != "" {
		return t.column
	}
	for _, a := range t.args {
		if c := a.columnName(); c != "" {
			return c
		}
	}
	return ""
}

// isUntypedConstant reports whether e is a quoted value or a parameter, a
// constant whose type PostgreSQL takes from its context.
func isUntypedConstant(e sqlparser.Expr) bool {
	switch x := e.(type) {
	case *sqlparser.UnaryExpr:
		return isUntypedConstant(x.Expr)
	case *sqlparser.SQLVal:
		return x.Type == sqlparser.StrVal || x.Type == sqlparser.ValArg
	}
	return false
}

// constantText is a constant as the analyst wrote it, a parameter as $n.
func constantText(e sqlparser.Expr) string {
	switch x := e.(type) {
	case *sqlparser.UnaryExpr:
		return x.Operator + constantText(x.Expr)
	case *sqlparser.SQLVal:
		switch x.Type {
		case sqlparser.ValArg:
			return "$" + strings.TrimPrefix(string(x.Val), ":v")
		case sqlparser.StrVal:
			return "'" + strings.ReplaceAll(string(x.Val), "'", "''") + "'"
		}
		return string(x.Val)
	}
	return "a constant"
}

// constantTerm reads a constant of an arithmetic expression, typed by its
// form, or by want when it is untyped.
func (p *parser) constantTerm(e sqlparser.Expr, want mathType) (*mathTerm, error) {
	lit, err := p.numberLiteral(e, want)
	if err != nil {
		return nil, err
	}
	text := constantText(e)
	typ := constantType(lit)
	if isUntypedConstant(e) && want.isInteger() {
		if typ, err = untypedInteger(lit, want, text); err != nil {
			return nil, err
		}
	}
	return &mathTerm{expr: &ir.NumberLit{Value: lit}, typ: typ, text: text}, nil
}

// untypedInteger is the type of an untyped constant read as an integer of
// type want: PostgreSQL reads '3000000000' next to an integer as an
// integer, and refuses it.
func untypedInteger(lit ir.Literal, want mathType, text string) (mathType, error) {
	lo, hi := want.integerLimits()
	if lit.Kind == ir.LitInt && (lit.Int < lo || lit.Int > hi) {
		return 0, pgerror.Errorf(pgerror.NumericValueOutOfRange, "%s is out of range for type %s", text, want)
	}
	return want, nil
}

// operands reads the two sides of arithmetic. An untyped constant takes the
// other side's type, so that side is read first; two untyped constants have
// no type, as in PostgreSQL.
func (p *parser) operands(x *sqlparser.BinaryExpr) (l, r *mathTerm, err error) {
	switch lu, ru := isUntypedConstant(x.Left), isUntypedConstant(x.Right); {
	case lu && ru:
		return nil, nil, pgerror.Errorf(pgerror.AmbiguousFunction, "operator is not unique: unknown %s unknown", x.Operator)
	case lu:
		if r, err = p.expr(x.Right, typeInt8); err != nil {
			return nil, nil, err
		}
		l, err = p.expr(x.Left, r.typ)
	default:
		if l, err = p.expr(x.Left, typeInt8); err != nil {
			return nil, nil, err
		}
		r, err = p.expr(x.Right, l.typ)
	}
	return l, r, err
}

// arithmeticTerm reads l op r, refusing as PostgreSQL refuses it before any
// row matters (an operator that does not exist, a constant zero divisor)
// and what countwall does not compute (numeric).
func (p *parser) arithmeticTerm(x *sqlparser.BinaryExpr) (*mathTerm, error) {
	op := x.Operator
	l, r, err := p.operands(x)
	if err != nil {
		return nil, err
	}
	typ, err := arithmeticType(op, l, r)
	if err != nil {
		return nil, err
	}
	if (op == "/" || op == "%") && p.bind && isConstantZero(r) {
		return nil, pgerror.Errorf(pgerror.DivisionByZero, "division by zero")
	}
	text := l.text + " " + op + " " + r.text
	if typ == typeNumeric {
		return nil, numericArithmetic(text, l.typ == typeNumeric && r.typ == typeNumeric)
	}
	if typ == typeFloat8 {
		for _, side := range []*mathTerm{l, r} {
			if err := castConstant(side); err != nil {
				return nil, err
			}
		}
	}
	return &mathTerm{expr: &ir.BinaryExpr{Op: op, Left: l.expr, Right: r.expr}, typ: typ, text: text, args: []*mathTerm{l, r}}, nil
}

// functionTerm reads an allowed function of one argument.
func (p *parser) functionTerm(name string, argExpr sqlparser.Expr) (*mathTerm, error) {
	want := typeFloat8 // PostgreSQL's choice for an untyped argument of abs, round...
	if name == "length" || name == "lower" || name == "upper" {
		if isLiteral(argExpr) {
			return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "%s of a constant is not supported in conditions; apply it to a text column", name)
		}
		want = typeText
	}
	arg, err := p.expr(argExpr, want)
	if err != nil {
		return nil, err
	}
	typ, err := functionType(name, arg)
	if err != nil {
		return nil, err
	}
	return &mathTerm{expr: &ir.FuncCall{Name: name, Args: []ir.Expr{arg.expr}}, typ: typ, text: name + "(" + arg.text + ")", args: []*mathTerm{arg}}, nil
}

// castConstant casts a number constant that is an operand of double
// precision arithmetic to double precision, as PostgreSQL does when it plans
// the statement. Any other term is left as it is: SQLite and PostgreSQL
// convert an integer to a double when they compute, the same way.
func castConstant(t *mathTerm) error {
	n, ok := t.expr.(*ir.NumberLit)
	if !ok || t.typ == typeFloat8 {
		return nil
	}
	v, err := float8Constant(n.Value, t.text)
	if err != nil {
		return err
	}
	n.Value, t.typ = v, typeFloat8
	return nil
}

// float8Constant is a number constant as PostgreSQL's cast to double
// precision makes it: correctly rounded, refused (22003) when it rounds to
// an infinity, or, not being zero, to zero.
func float8Constant(l ir.Literal, text string) (ir.Literal, error) {
	switch {
	case l.Kind == ir.LitInt:
		return ir.Literal{Kind: ir.LitFloat, Float: float64(l.Int)}, nil
	case !isDecimal(l):
		return l, nil
	}
	f, _ := strconv.ParseFloat(l.Text, 64) // Inf or 0 past the range: told below
	exact, ok := exactDecimal(l)
	switch {
	case math.IsInf(f, 0):
		return ir.Literal{}, pgerror.Errorf(pgerror.NumericValueOutOfRange, "%s is out of range for type double precision (overflow)", text)
	case f == 0 && ok && exact.Sign() != 0:
		return ir.Literal{}, pgerror.Errorf(pgerror.NumericValueOutOfRange, "%s is out of range for type double precision (underflow)", text)
	}
	return ir.Literal{Kind: ir.LitFloat, Float: f}, nil
}

// comparedValue reads the constant an arithmetic condition compares with,
// as PostgreSQL compares it with a value of type t: cast to double
// precision for a double precision expression, kept exact for an integer
// one (exactIntegerComparison).
func (p *parser) comparedValue(e sqlparser.Expr, t mathType) (ir.Literal, error) {
	lit, err := p.numberLiteral(e, t)
	if err != nil {
		return ir.Literal{}, err
	}
	text := constantText(e)
	if t == typeFloat8 {
		return float8Constant(lit, text)
	}
	if isUntypedConstant(e) {
		if _, err := untypedInteger(lit, t, text); err != nil {
			return ir.Literal{}, err
		}
	}
	return lit, nil
}

// exactIntegerComparison rewrites `x op r`, for an integer expression x
// (whose values the totality check keeps within bigint) and a decimal r,
// into `x op' n` with an integer n that holds for exactly the same values
// of x, and is NULL for NULL, as PostgreSQL compares an integer with a
// numeric: `x = 2.5` holds for no x (x < minimum), `x <> 2.5` for every one
// (x >= minimum), `x > 2.5` is `x >= 3`.
func exactIntegerComparison(op string, r *big.Rat) (string, ir.Literal) {
	floor, ceil := ratFloor(r), ratFloor(r)
	if !r.IsInt() {
		ceil = new(big.Int).Add(floor, big.NewInt(1))
	}
	one := big.NewInt(1)
	switch op {
	case "=", "<>":
		if r.IsInt() && floor.IsInt64() {
			return op, integerConstant(floor.Int64())
		}
		if op == "=" {
			return "<", integerConstant(math.MinInt64) // never
		}
		return ">=", integerConstant(math.MinInt64) // always
	case "<":
		return atMost(new(big.Int).Sub(ceil, one))
	case "<=":
		return atMost(floor)
	case ">":
		return atLeast(new(big.Int).Add(floor, one))
	}
	return atLeast(ceil) // ">="
}

// atMost is `x <= b` for a bigint x and any integer b.
func atMost(b *big.Int) (string, ir.Literal) {
	switch {
	case b.Cmp(bigMinInt64) < 0:
		return "<", integerConstant(math.MinInt64) // never
	case b.Cmp(bigMaxInt64) >= 0:
		return ">=", integerConstant(math.MinInt64) // always
	}
	return "<=", integerConstant(b.Int64())
}

// atLeast is `x >= b` for a bigint x and any integer b.
func atLeast(b *big.Int) (string, ir.Literal) {
	switch {
	case b.Cmp(bigMinInt64) <= 0:
		return ">=", integerConstant(math.MinInt64) // always
	case b.Cmp(bigMaxInt64) > 0:
		return ">", integerConstant(math.MaxInt64) // never
	}
	return ">=", integerConstant(b.Int64())
}

var (
	bigMinInt64 = big.NewInt(math.MinInt64)
	bigMaxInt64 = big.NewInt(math.MaxInt64)
)

func integerConstant(n int64) ir.Literal { return ir.Literal{Kind: ir.LitInt, Int: n} }

// ratFloor is the largest integer not above r.
func ratFloor(r *big.Rat) *big.Int {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() < 0 { // QuoRem truncates toward zero
		q.Sub(q, big.NewInt(1))
	}
	return q
}
