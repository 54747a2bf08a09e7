package planner

import (
	"strings"

	"github.com/xwb1989/sqlparser"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/pgtypes"
)

var flipped = map[string]string{"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// comparison converts a ComparisonExpr: IN, LIKE, or an ordered comparison
// of a column (or, where policy allows, arithmetic on one column) with a
// value.
func (p *parser) comparison(x *sqlparser.ComparisonExpr) (ir.Pred, error) {
	if containsSubquery(x.Left) || containsSubquery(x.Right) {
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "subqueries are not supported")
	}
	op := x.Operator
	if op == sqlparser.NotEqualStr {
		op = "<>"
	}
	if f, ok := quantifiedCall(x.Right); ok {
		return p.quantified(x, op, f)
	}
	switch op {
	case sqlparser.InStr, sqlparser.NotInStr:
		return p.inList(x, op)
	case sqlparser.LikeStr, sqlparser.NotLikeStr:
		return p.like(x, op)
	case "=", "<>", "<", "<=", ">", ">=":
		return p.ordered(x, op)
	case sqlparser.NullSafeEqualStr:
		return p.notDistinct(x)
	default:
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "operator %s is not supported", strings.ToUpper(x.Operator))
	}
}

// inList converts col [NOT] IN (literal, ...).
func (p *parser) inList(x *sqlparser.ComparisonExpr, op string) (ir.Pred, error) {
	pol := p.table.Policy
	if op == sqlparser.NotInStr && (pol.Strict || !pol.AllowNotEqual) {
		return nil, p.policyError("NOT IN")
	}
	if pol.Strict {
		return nil, p.policyError("IN")
	}
	col, err := p.leafColumn(x.Left)
	if err != nil {
		return nil, err
	}
	tuple, ok := x.Right.(sqlparser.ValTuple)
	if !ok {
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "IN needs a list of values")
	}
	if len(tuple) > pol.MaxInList {
		return nil, pgerror.Errorf(pgerror.ProgramLimitExceeded, "IN list of %d values is over the limit of %d", len(tuple), pol.MaxInList)
	}
	ops := make([]operand, len(tuple))
	for i, v := range tuple {
		if ops[i], err = p.operandOf(v, col); err != nil {
			return nil, err
		}
	}
	return p.inPred(col, op == sqlparser.NotInStr, ops)
}

// like converts col [NOT] LIKE 'pattern'.
func (p *parser) like(x *sqlparser.ComparisonExpr, op string) (ir.Pred, error) {
	pol := p.table.Policy
	if pol.Strict || !pol.AllowLike {
		return nil, p.policyError("LIKE")
	}
	if op == sqlparser.NotLikeStr && !pol.AllowNotEqual {
		return nil, p.policyError("NOT LIKE")
	}
	if x.Escape != nil {
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "LIKE ... ESCAPE is not supported; backslash is the escape character")
	}
	col, err := p.leafColumn(x.Left)
	if err != nil {
		return nil, err
	}
	if t := p.table.Columns[col].Type; t != ir.TypeText {
		return nil, pgerror.Errorf(pgerror.UndefinedFunction, "operator does not exist: %s %s unknown: LIKE needs a text column, but %q is %s",
			columnType(t).Name(), operatorName(op), col, t)
	}
	pattern, err := p.operandOf(x.Right, col)
	if err != nil {
		return nil, err
	}
	p.settle(&pattern, pgtypes.Text)
	if err := p.checkOperator(col, op, pattern); err != nil {
		return nil, err
	}
	if pattern.null {
		return unknown(col, ir.TypeText, p.negated), nil
	}
	v, err := pattern.read(col)
	if err != nil {
		return nil, err
	}
	if trailingEscape(v.s) {
		return nil, pgerror.Errorf(pgerror.InvalidEscapeSequence, "LIKE pattern must not end with escape character")
	}
	return &ir.Like{Column: col, Pattern: v.s, Negate: op == sqlparser.NotLikeStr}, nil
}

// ordered converts =, <>, <, <=, > and >= with the value on either side.
func (p *parser) ordered(x *sqlparser.ComparisonExpr, op string) (ir.Pred, error) {
	pol := p.table.Policy
	if op != "=" && pol.Strict {
		return nil, p.policyError("operator " + op)
	}
	if op == "<>" && !pol.AllowNotEqual {
		return nil, p.policyError("<>")
	}
	left, right := x.Left, x.Right
	if isLiteral(left) && !isLiteral(right) {
		left, right, op = right, left, flipped[op]
	}
	if !isLiteral(right) {
		if isColumn(left) && isColumn(right) {
			// An unknown name is named first: sex = "F" compares with a
			// column "F", which PostgreSQL reports as missing.
			for _, side := range []sqlparser.Expr{left, right} {
				if c, ok := side.(*sqlparser.ColName); ok {
					if _, err := p.column(c); err != nil {
						return nil, err
					}
				}
			}
			return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "column-to-column comparisons are not supported")
		}
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "a condition must compare a column with a value")
	}
	if isColumn(left) {
		return p.columnCompare(left, right, op)
	}
	return p.mathCompare(left, right, op)
}

// columnCompare converts col op literal.
func (p *parser) columnCompare(left, right sqlparser.Expr, op string) (ir.Pred, error) {
	col, err := p.leafColumn(left)
	if err != nil {
		return nil, err
	}
	o, err := p.operandOf(right, col)
	if err != nil {
		return nil, err
	}
	return p.comparePred(col, op, o)
}

// mathCompare converts expr op number, where expr is arithmetic or
// allow-listed functions on exactly one column: typed as PostgreSQL types
// it, checked total over the column's range (exprrange.go), and compared
// with the number as PostgreSQL compares them.
func (p *parser) mathCompare(left, right sqlparser.Expr, op string) (ir.Pred, error) {
	pol := p.table.Policy
	if pol.Strict || !pol.AllowMath {
		return nil, p.policyError("arithmetic and functions in conditions")
	}
	term, err := p.expr(left, typeInt8)
	if err != nil {
		return nil, err
	}
	if term.columns() != 1 {
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "an expression in a condition must use exactly one column")
	}
	if term.typ == typeText {
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "a condition may compare a number computed from a column, not text (lower and upper go inside length)")
	}
	p.leaves++
	value, err := p.comparedValue(right, term.typ)
	if err != nil {
		return nil, err
	}
	// An unbound read (Describe) holds no parameter's value, which the
	// ranges need: a divisor $1 would read as zero. Bind checks them.
	if p.bind {
		if err := p.checkTotal(term); err != nil {
			return nil, err
		}
	}
	if r, ok := exactDecimal(value); ok && term.typ.isInteger() {
		op, value = exactIntegerComparison(op, r)
	}
	guard := columnGuard(p.table.Columns[term.columnName()])
	return &ir.MathCompare{Expr: term.expr, Op: op, Value: value, Guard: guard}, nil
}

func containsSubquery(e sqlparser.Expr) bool {
	switch x := e.(type) {
	case *sqlparser.ColName, *sqlparser.SQLVal, *sqlparser.NullVal, sqlparser.BoolVal:
		return false // the sides of almost every condition: no walk needed
	case sqlparser.ValTuple:
		for _, v := range x {
			if containsSubquery(v) {
				return true
			}
		}
		return false
	}
	found := false
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		if _, ok := n.(*sqlparser.Subquery); ok {
			found = true
			return false, nil
		}
		return true, nil
	}, e)
	return found
}
