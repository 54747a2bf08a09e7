package planner

import (
	"countwall/ir"
	"countwall/pgerror"
	"countwall/pgtypes"
	"fmt"
	"math"
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
		p.negated = !p.negated
		inner, err := p.pred(x.Expr)
		p.negated = !p.negated
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
	if f, isCast := e.(*sqlparser.FuncExpr); isCast && f.Name.Lowered() == castCall {
		inner, typ := castArgs(f)
		if c, ok := inner.(*sqlparser.ColName); ok {
			name, err := p.column(c)
			if err != nil {
				return "", err
			}
			if err := p.checkColumnCast(name, typ, false); err != nil {
				return "", err
			}
			e = c
		}
	}
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

// isColumn reports whether e is a column, or a cast of one (which
// leafColumn allows or refuses by its type).
func isColumn(e sqlparser.Expr) bool {
	if f, ok := e.(*sqlparser.FuncExpr); ok && f.Name.Lowered() == castCall {
		e, _ = castArgs(f)
	}
	_, ok := e.(*sqlparser.ColName)
	return ok
}

func isLiteral(e sqlparser.Expr) bool {
	switch x := e.(type) {
	case *sqlparser.SQLVal, *sqlparser.NullVal, sqlparser.BoolVal:
		return true
	case *sqlparser.UnaryExpr:
		return isLiteral(x.Expr)
	case *sqlparser.FuncExpr:
		inner, _ := castArgs(x)
		return x.Name.Lowered() == castCall && inner != nil && isLiteral(inner)
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
	lo, err := p.operandOf(x.From, col)
	if err != nil {
		return nil, err
	}
	hi, err := p.operandOf(x.To, col)
	if err != nil {
		return nil, err
	}
	return p.betweenPred(col, lo, hi, negate)
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
// parameter of no declared type is read as want, the type its context
// gives it, by that type's input function. A parameter whose type is
// already fixed (declared, or given by an earlier use) is taken in
// arithmetic only where that is the type the context would give it:
// PostgreSQL would convert it, which countwall does not do inside an
// expression (0A000); one of no number type has no operator (42883).
func (p *parser) numberLiteral(e sqlparser.Expr, want mathType) (ir.Literal, error) {
	const col = "expression"
	o, err := p.operandOf(e, col)
	if err != nil {
		return ir.Literal{}, err
	}
	if o.null {
		return ir.Literal{}, pgerror.Errorf(pgerror.FeatureNotSupported, "an arithmetic condition compared with NULL is not supported (it is never true): use IS NULL on the column")
	}
	read := mathParamTypes[want]
	if o.typ == pgtypes.Unknown {
		p.settle(&o, read)
	}
	switch {
	case o.param == 0 && numberTypes[o.typ], o.typ == read && numberTypes[read]:
	case !numberTypes[o.typ]:
		return ir.Literal{}, pgerror.Errorf(pgerror.UndefinedFunction, "operator does not exist: %s and %s: %s is %s, and arithmetic takes a number", want, o.typ.Name(), o.name(), o.typ.Name())
	default:
		return ir.Literal{}, pgerror.Errorf(pgerror.FeatureNotSupported,
			"%s is %s, where this arithmetic takes %s; countwall does not convert a parameter inside an expression: leave its type unspecified", o.name(), o.typ.Name(), want)
	}
	v, err := o.readNamed(subject{text: constantText(e)})
	if err != nil {
		return ir.Literal{}, err
	}
	switch v.kind {
	case intValue:
		return exactInt(v.i), nil
	case floatValue:
		if math.IsNaN(v.f) || math.IsInf(v.f, 0) {
			return ir.Literal{}, pgerror.Errorf(pgerror.DatatypeMismatch, "%s is not a finite number, which arithmetic conditions do not compare with", o.name())
		}
		return ir.Literal{Kind: ir.LitFloat, Float: v.f}, nil
	}
	if v.num.kind != numericFinite {
		return ir.Literal{}, pgerror.Errorf(pgerror.DatatypeMismatch, "%s is not a finite number, which arithmetic conditions do not compare with", o.name())
	}
	f, _ := strconv.ParseFloat(v.num.text(), 64)
	return ir.Literal{Kind: ir.LitFloat, Float: f, Text: v.num.text()}, nil
}

// mathParamTypes are the types PostgreSQL gives an untyped constant in an
// arithmetic context of each type.
var mathParamTypes = map[mathType]pgtypes.OID{typeInt4: pgtypes.Int4, typeInt8: pgtypes.Int8,
	typeFloat8: pgtypes.Float8, typeNumeric: pgtypes.Numeric, typeText: pgtypes.Text}

// trailingEscape reports whether a LIKE pattern ends with an escape
// character that escapes nothing (an odd run of backslashes at its end).
func trailingEscape(pattern string) bool {
	n := 0
	for i := len(pattern) - 1; i >= 0 && pattern[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// unitInWhere refuses a condition on the privacy unit, saying how the owner
// may allow it.
func (p *parser) unitInWhere(name string) error {
	return pgerror.Errorf(pgerror.InsufficientPrivilege, "column %q is the privacy unit and may not be filtered on", name).
		WithHint(fmt.Sprintf("The data owner can allow it with tables.%s.policy.unit_in_where: true (or policy.unit_in_where for every table).", p.table.Name))
}
