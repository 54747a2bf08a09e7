package planner

import (
	"countwall/ir"
	"countwall/pgerror"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/xwb1989/sqlparser"
)

// pred converts a WHERE expression into the IR, enforcing the table's policy.
func (p *parser) pred(e sqlparser.Expr) (ir.Pred, error) {
	if err := p.deeper(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	pol := p.table.Policy
	switch x := e.(type) {
	case *sqlparser.ParenExpr:
		return p.pred(x.Expr)
	case *sqlparser.AndExpr:
		l, r, err := p.both(x.Left, x.Right)
		if err != nil {
			return nil, err
		}
		return &ir.And{Left: l, Right: r}, nil
	case *sqlparser.OrExpr:
		if pol.Strict || !pol.AllowOr {
			return nil, p.policyError("OR")
		}
		l, r, err := p.both(x.Left, x.Right)
		if err != nil {
			return nil, err
		}
		return &ir.Or{Left: l, Right: r}, nil
	case *sqlparser.NotExpr:
		if pol.Strict || !pol.AllowNotEqual {
			return nil, p.policyError("NOT")
		}
		inner, err := p.pred(x.Expr)
		if err != nil {
			return nil, err
		}
		return &ir.Not{Inner: inner}, nil
	case *sqlparser.ComparisonExpr:
		return p.comparison(x)
	case *sqlparser.RangeCond:
		return p.between(x)
	case *sqlparser.IsExpr:
		col, err := p.leafColumn(x.Expr)
		if err != nil {
			return nil, err
		}
		switch x.Operator {
		case sqlparser.IsNullStr:
			return &ir.IsNull{Column: col}, nil
		case sqlparser.IsNotNullStr:
			return &ir.IsNull{Column: col, Negate: true}, nil
		}
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "%s is not supported", strings.ToUpper(x.Operator))
	case *sqlparser.ExistsExpr, *sqlparser.Subquery:
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "subqueries are not supported")
	case *sqlparser.ColName:
		return nil, pgerror.Errorf(pgerror.DatatypeMismatch, "column %q alone is not a condition; compare it with a value", x.Name.String())
	case sqlparser.BoolVal, *sqlparser.SQLVal, *sqlparser.NullVal:
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "constant conditions are not supported; compare a column with a value")
	}
	return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "this kind of condition is not supported; use column comparisons, BETWEEN, IN, IS NULL or LIKE")
}

// MaxNesting bounds how deep conditions and expressions may nest (NOT, AND,
// OR, parentheses, arithmetic). SQLite refuses expressions deeper than 1000
// with an internal error; a bound well below it refuses them here, by name.
const MaxNesting = 200

func (p *parser) deeper() error {
	p.depth++
	if p.depth > MaxNesting {
		return pgerror.Errorf(pgerror.ProgramLimitExceeded, "WHERE nests conditions or expressions more than %d deep", MaxNesting)
	}
	return nil
}

// both converts the two sides of AND or OR.
func (p *parser) both(left, right sqlparser.Expr) (ir.Pred, ir.Pred, error) {
	l, err := p.pred(left)
	if err != nil {
		return nil, nil, err
	}
	r, err := p.pred(right)
	if err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

func (p *parser) policyError(construct string) error {
	if p.table.Policy.Strict {
		return pgerror.Errorf(pgerror.InsufficientPrivilege, "%s is not allowed under the strict policy of table %q: only AND-ed equalities", construct, p.table.Name)
	}
	return pgerror.Errorf(pgerror.InsufficientPrivilege, "%s is not allowed by the policy of table %q", construct, p.table.Name)
}

// leafColumn resolves the column of a condition and counts the condition
// against max_conditions.
func (p *parser) leafColumn(e sqlparser.Expr) (string, error) {
	col, ok := e.(*sqlparser.ColName)
	if !ok {
		return "", pgerror.Errorf(pgerror.FeatureNotSupported, "the left side of this condition must be a column")
	}
	name, err := p.column(col)
	if err != nil {
		return "", err
	}
	if name == p.table.PrivacyUnit && !p.table.Policy.UnitInWhere {
		return "", p.unitInWhere(name)
	}
	p.leaves++
	return name, nil
}

func isColumn(e sqlparser.Expr) bool { _, ok := e.(*sqlparser.ColName); return ok }

func isLiteral(e sqlparser.Expr) bool {
	switch x := e.(type) {
	case *sqlparser.SQLVal, *sqlparser.NullVal, sqlparser.BoolVal:
		return true
	case *sqlparser.UnaryExpr:
		return isLiteral(x.Expr)
	}
	return false
}

func (p *parser) between(x *sqlparser.RangeCond) (ir.Pred, error) {
	pol := p.table.Policy
	if pol.Strict {
		return nil, p.policyError("BETWEEN")
	}
	negate := x.Operator == sqlparser.NotBetweenStr
	if negate && !pol.AllowNotEqual {
		return nil, p.policyError("NOT BETWEEN")
	}
	col, err := p.leafColumn(x.Left)
	if err != nil {
		return nil, err
	}
	lo, err := p.literal(x.From, col)
	if err != nil {
		return nil, err
	}
	hi, err := p.literal(x.To, col)
	if err != nil {
		return nil, err
	}
	if p.table.Columns[col].Type == ir.TypeInt {
		return exactBetween(&ir.Between{Column: col, Lo: lo, Hi: hi, Negate: negate}), nil
	}
	return &ir.Between{Column: col, Lo: lo, Hi: hi, Negate: negate}, nil
}

var allowedFuncs = map[string]int{"abs": 1, "round": 1, "floor": 1, "ceil": 1, "length": 1, "lower": 1, "upper": 1}

// expr converts arithmetic over columns and constants into a term: its IR,
// its PostgreSQL type and the text the analyst wrote. want is the type an
// untyped constant here takes (a quoted value or a parameter), as
// PostgreSQL types it by its context.
func (p *parser) expr(e sqlparser.Expr, want mathType) (*mathTerm, error) {
	if err := p.deeper(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	switch x := e.(type) {
	case *sqlparser.ParenExpr:
		t, err := p.expr(x.Expr, want)
		if err != nil {
			return nil, err
		}
		t.text = "(" + t.text + ")"
		return t, nil
	case *sqlparser.ColName:
		name, err := p.column(x)
		if err != nil {
			return nil, err
		}
		if name == p.table.PrivacyUnit && !p.table.Policy.UnitInWhere {
			return nil, p.unitInWhere(name)
		}
		return &mathTerm{expr: &ir.ColumnRef{Column: name}, typ: columnMathType(p.table.Columns[name].Type), text: name, column: name}, nil
	case *sqlparser.SQLVal, *sqlparser.UnaryExpr:
		return p.constantTerm(x, want)
	case *sqlparser.BinaryExpr:
		switch x.Operator {
		case "+", "-", "*", "/", "%":
		default:
			return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "operator %s is not supported in expressions", x.Operator)
		}
		return p.arithmeticTerm(x)
	case *sqlparser.FuncExpr:
		name := x.Name.Lowered()
		arity, ok := allowedFuncs[name]
		if !ok || !x.Qualifier.IsEmpty() || x.Distinct {
			return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "function %s is not allowed in conditions", strings.ToUpper(name))
		}
		if len(x.Exprs) != arity {
			return nil, pgerror.Errorf(pgerror.SyntaxError, "%s takes %d argument", strings.ToUpper(name), arity)
		}
		ae, ok := x.Exprs[0].(*sqlparser.AliasedExpr)
		if !ok {
			return nil, pgerror.Errorf(pgerror.SyntaxError, "bad argument to %s", strings.ToUpper(name))
		}
		return p.functionTerm(name, ae.Expr)
	}
	return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "this expression is not supported in conditions")
}

// numberLiteral reads a constant of an arithmetic condition. A number keeps
// its exact text (its type comes from its form); a quoted value or a
// parameter is read as want, the type its context gives it.
func (p *parser) numberLiteral(e sqlparser.Expr, want mathType) (ir.Literal, error) {
	read := ir.TypeInt
	if want == typeFloat8 && isUntypedConstant(e) {
		read = ir.TypeReal
	}
	lit, err := p.rawLiteral(e, read, "expression")
	if err != nil {
		return ir.Literal{}, err
	}
	if lit.Kind == ir.LitText {
		return ir.Literal{}, pgerror.Errorf(pgerror.DatatypeMismatch, "an arithmetic condition must compare with a number")
	}
	return lit, nil
}

// literal converts a value compared with column col, checking its type.
func (p *parser) literal(e sqlparser.Expr, col string) (ir.Literal, error) {
	return p.rawLiteral(e, p.table.Columns[col].Type, col)
}

func (p *parser) rawLiteral(e sqlparser.Expr, want ir.ColumnType, col string) (ir.Literal, error) {
	neg := false
	if u, ok := e.(*sqlparser.UnaryExpr); ok {
		if u.Operator != sqlparser.UMinusStr && u.Operator != sqlparser.UPlusStr {
			return ir.Literal{}, pgerror.Errorf(pgerror.FeatureNotSupported, "operator %s is not supported on values", u.Operator)
		}
		neg, e = u.Operator == sqlparser.UMinusStr, u.Expr
	}
	switch v := e.(type) {
	case *sqlparser.NullVal:
		return ir.Literal{}, pgerror.Errorf(pgerror.DatatypeMismatch, "comparison of %q with NULL is never true; use IS NULL", col)
	case sqlparser.BoolVal:
		return ir.Literal{}, pgerror.Errorf(pgerror.DatatypeMismatch, "boolean values are not supported (column %q)", col)
	case *sqlparser.SQLVal:
		switch v.Type {
		case sqlparser.ValArg:
			return p.param(string(v.Val), want, col, neg)
		case sqlparser.StrVal:
			if neg {
				return ir.Literal{}, pgerror.Errorf(pgerror.DatatypeMismatch, "a minus sign cannot apply to text")
			}
			if want == ir.TypeInt {
				// As in PostgreSQL, a quoted literal takes the column's type
				// ('40' for an integer column; drivers that interpolate
				// parameters client-side send numbers so), and one that does
				// not read as an integer is invalid input for it.
				return integerInput(strings.TrimSpace(string(v.Val)), col, "")
			}
			if want != ir.TypeText {
				if lit, err := numberFromText(strings.TrimSpace(string(v.Val)), want, col); err == nil {
					return lit, nil
				}
				return ir.Literal{}, pgerror.Errorf(pgerror.DatatypeMismatch, "column %q is %s but was compared with a text value", col, want)
			}
			return ir.Literal{Kind: ir.LitText, Text: string(v.Val)}, nil
		case sqlparser.IntVal, sqlparser.FloatVal:
			if want == ir.TypeText {
				return ir.Literal{}, pgerror.Errorf(pgerror.DatatypeMismatch, "column %q is text but was compared with a number; quote the value", col)
			}
			if v.Type == sqlparser.IntVal && digitsOnly(v.Val) {
				// The common case, read without the text's copy.
				if n, err := strconv.ParseInt(string(v.Val), 10, 64); err == nil {
					if neg {
						n = -n
					}
					return integerLiteral(n, want), nil
				}
			}
			s := string(v.Val)
			if neg {
				s = "-" + s
			}
			return numberFromText(s, want, col)
		}
	}
	return ir.Literal{}, pgerror.Errorf(pgerror.FeatureNotSupported, "only constant values may be compared with column %q", col)
}

func numberFromText(s string, want ir.ColumnType, col string) (ir.Literal, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return integerLiteral(n, want), nil // [+-]digits: a valid, finite number
	}
	if nonFinite(s) {
		// 'NaN' and 'Infinity' read as numbers in Go but compare with nothing
		// in SQLite the way PostgreSQL would; refused like any non-number.
		return ir.Literal{}, pgerror.Errorf(pgerror.DatatypeMismatch, "column %q is %s but was compared with a value that is not a finite number", col, want)
	}
	if !decimalRE.MatchString(s) {
		return ir.Literal{}, pgerror.Errorf(pgerror.InvalidParameterValue, "value compared with column %q is not a valid number", col)
	}
	if want == ir.TypeInt {
		// Kept exact (see exact.go): the comparison is rewritten into an
		// integer one, so the float64 below is never compared.
		if _, ok := new(big.Rat).SetString(s); ok {
			f, _ := strconv.ParseFloat(s, 64)
			return ir.Literal{Kind: ir.LitFloat, Float: f, Text: s}, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return ir.Literal{}, pgerror.Errorf(pgerror.InvalidParameterValue, "value compared with column %q is not a valid number", col)
	}
	return ir.Literal{Kind: ir.LitFloat, Float: f}, nil
}

// integerLiteral is an integer compared with a column of type want.
func integerLiteral(n int64, want ir.ColumnType) ir.Literal {
	if want == ir.TypeReal {
		return ir.Literal{Kind: ir.LitFloat, Float: float64(n)}
	}
	return ir.Literal{Kind: ir.LitInt, Int: n}
}

// digitsOnly reports whether b is one or more ASCII digits.
func digitsOnly(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// param binds placeholder :vN to the N-th argument, typed by the column.
func (p *parser) param(name string, want ir.ColumnType, col string, neg bool) (ir.Literal, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, ":v"))
	if err != nil || n < 1 {
		return ir.Literal{}, pgerror.Errorf(pgerror.SyntaxError, "bad parameter placeholder")
	}
	for len(p.paramTypes) < n {
		p.paramTypes = append(p.paramTypes, nil)
	}
	t := want
	p.paramTypes[n-1] = &t
	if !p.bind {
		if want == ir.TypeText {
			return ir.Literal{Kind: ir.LitText}, nil
		}
		return ir.Literal{Kind: ir.LitInt}, nil
	}
	arg := p.args[n-1]
	if arg == nil {
		return ir.Literal{}, pgerror.Errorf(pgerror.DatatypeMismatch, "parameter $%d is NULL; use IS NULL to test for NULL", n)
	}
	if want == ir.TypeText {
		if neg {
			return ir.Literal{}, pgerror.Errorf(pgerror.DatatypeMismatch, "a minus sign cannot apply to text parameter $%d", n)
		}
		return ir.Literal{Kind: ir.LitText, Text: *arg}, nil
	}
	s := strings.TrimSpace(*arg)
	if neg {
		s = "-" + s
	}
	if want == ir.TypeInt {
		// PostgreSQL types the parameter as the column (bigint) and reads
		// it with the integer input function.
		return integerInput(s, col, fmt.Sprintf("parameter $%d", n))
	}
	if nonFinite(s) {
		return ir.Literal{}, pgerror.Errorf(pgerror.DatatypeMismatch, "parameter $%d is not a finite number, but column %q is %s", n, col, want)
	}
	lit, err := numberFromText(s, want, col)
	if err != nil {
		return ir.Literal{}, pgerror.Errorf(pgerror.InvalidParameterValue, "parameter $%d is not a valid %s for column %q", n, want, col)
	}
	return lit, nil
}

// nonFinite reports whether s spells NaN or an infinity, as PostgreSQL's
// float input and Go's ParseFloat accept them.
func nonFinite(s string) bool {
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "nan", "inf", "infinity":
		return true
	}
	return false
}

// trailingEscape reports whether a LIKE pattern ends with an escape
// character that escapes nothing (an odd run of backslashes at its end).
func trailingEscape(pattern string) bool {
	n := 0
	for i := len(pattern) - 1; i >= 0 && pattern[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// integerInput reads a quoted value or a parameter compared with an integer
// column as PostgreSQL's bigint input does: an optional sign and digits,
// 22003 beyond the int64 range, 22P02 for anything else.
func integerInput(s, col, what string) (ir.Literal, error) {
	if what == "" {
		what = "the value"
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, 64)
	switch {
	case err == nil && !strings.HasPrefix(s, "+-") && !strings.HasPrefix(s, "+ "):
		return ir.Literal{Kind: ir.LitInt, Int: n}, nil
	case errors.Is(err, strconv.ErrRange):
		return ir.Literal{}, pgerror.Errorf(pgerror.NumericValueOutOfRange, "%s compared with column %q is out of range for type bigint", what, col)
	}
	return ir.Literal{}, pgerror.Errorf(pgerror.InvalidTextRepresentation, "invalid input syntax for type bigint: %s compared with column %q", what, col)
}

// unitInWhere refuses a condition on the privacy unit, saying how the owner
// may allow it.
func (p *parser) unitInWhere(name string) error {
	return pgerror.Errorf(pgerror.InsufficientPrivilege, "column %q is the privacy unit and may not be filtered on", name).
		WithHint(fmt.Sprintf("The data owner can allow it with tables.%s.policy.unit_in_where: true (or policy.unit_in_where for every table).", p.table.Name))
}
