package planner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/xwb1989/sqlparser"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/pgtypes"
)

// col = ANY(array) is col IN (its elements), and col <> ALL(array) is col
// NOT IN (its elements), as PostgreSQL reads them: the same condition, under
// the same policy and limits, charged and audited as the IN list it is. An
// array's elements come from ARRAY[...] or a '{...}' constant (spread into
// the statement by rewriteForms) or from a parameter's value at Bind.
//
// Where IN differs is NULL. An empty array matches no row, not even one
// whose column is NULL, and ALL of it every row. A NULL element makes
// every non-match unknown rather than false, and a NULL array every row:
// under an even number of NOTs an unknown counts no row, exactly as false,
// so the element drops out; under an odd number the unknown of a non-match
// counts no row either, exactly as true would, so the condition is true
// wherever the column is not NULL.

// quantifiedCall is the call an ANY or ALL was rewritten into; false for
// any other expression.
func quantifiedCall(e sqlparser.Expr) (*sqlparser.FuncExpr, bool) {
	f, ok := e.(*sqlparser.FuncExpr)
	if !ok {
		return nil, false
	}
	switch f.Name.Lowered() {
	case anyCall, allCall, anyParamCall, allParamCall:
		return f, true
	}
	return nil, false
}

// quantified converts col = ANY(array) and col <> ALL(array).
func (p *parser) quantified(x *sqlparser.ComparisonExpr, op string, f *sqlparser.FuncExpr) (ir.Pred, error) {
	name := f.Name.Lowered()
	all := name == allCall || name == allParamCall
	if (all && op != "<>") || (!all && op != "=") {
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "%s %s (array) is not supported: = ANY (array) is IN and <> ALL (array) is NOT IN", op, pick(all, "ALL", "ANY")).
			WithHint("Compare with = ANY(array) or <> ALL(array).")
	}
	pol := p.table.Policy
	if all && (pol.Strict || !pol.AllowNotEqual) {
		return nil, p.policyError("<> ALL (NOT IN)")
	}
	if pol.Strict {
		return nil, p.policyError("= ANY (IN)")
	}
	col, err := p.leafColumn(x.Left)
	if err != nil {
		return nil, err
	}
	var ops []operand
	nulls, isNull := 0, false
	if name == anyParamCall || name == allParamCall {
		ops, nulls, isNull, err = p.wholeArray(f, col, op)
	} else {
		ops, nulls, err = p.arrayList(f, col)
	}
	if err != nil {
		return nil, err
	}
	if n := len(ops) + nulls; n > pol.MaxInList {
		return nil, pgerror.Errorf(pgerror.ProgramLimitExceeded, "array of %d values is over the IN-list limit of %d", n, pol.MaxInList)
	}
	ct := p.table.Columns[col].Type
	positive := p.negated == all // col = ANY(array) is under an even number of NOTs
	var a ir.Pred
	switch {
	case isNull:
		a = decided(col, ct, !positive)
	case len(ops) == 0 && nulls == 0:
		a = &ir.And{Left: &ir.IsNull{Column: col}, Right: &ir.IsNull{Column: col, Negate: true}}
	case nulls > 0 && !positive:
		a = trueUnlessNull(col, ct)
	case len(ops) == 0:
		a = falseUnlessNull(col, ct)
	default:
		return p.inPred(col, all, ops)
	}
	return negateIf(a, all), nil
}

// arrayList reads the elements of ARRAY[...] or a '{...}' constant.
func (p *parser) arrayList(f *sqlparser.FuncExpr, col string) (ops []operand, nulls int, err error) {
	for _, se := range f.Exprs {
		a, ok := se.(*sqlparser.AliasedExpr)
		if !ok {
			return nil, 0, errArrayForm
		}
		if _, isNull := a.Expr.(*sqlparser.NullVal); isNull {
			nulls++
			continue
		}
		o, err := p.operandOf(a.Expr, col)
		if err != nil {
			return nil, 0, err
		}
		ops = append(ops, o)
	}
	return ops, nulls, nil
}

// wholeArray reads the elements of an array known as a whole: a
// parameter (arrayParam), or NULL or an empty constant, whose element type,
// when one was given, must compare with the column by op as an element
// would, as PostgreSQL checks it whatever the array holds.
func (p *parser) wholeArray(f *sqlparser.FuncExpr, col, op string) (ops []operand, nulls int, isNull bool, err error) {
	arg := f.Exprs[0].(*sqlparser.AliasedExpr).Expr
	_, null := arg.(*sqlparser.NullVal)
	if v, ok := arg.(*sqlparser.SQLVal); !null && !(ok && v.Type == sqlparser.StrVal) {
		return p.arrayParam(f, col)
	}
	if len(f.Exprs) == 2 {
		_, typName := castArgs(&sqlparser.FuncExpr{Exprs: f.Exprs})
		elem, _, err := castType(typName)
		if err != nil {
			return nil, 0, false, err
		}
		if err := p.checkOperator(col, op, operand{typ: elem, null: true}); err != nil {
			return nil, 0, false, err
		}
	}
	return nil, 0, null, nil
}

// arrayParam reads the elements of an array parameter: by its declared
// array type's element type, or the type it is cast to, or, with neither,
// the column's (PostgreSQL infers an array of the column's type, which the
// client's ParameterDescription then says).
func (p *parser) arrayParam(f *sqlparser.FuncExpr, col string) (ops []operand, nulls int, isNull bool, err error) {
	v, ok := f.Exprs[0].(*sqlparser.AliasedExpr).Expr.(*sqlparser.SQLVal)
	n, perr := 0, error(nil)
	if ok {
		n, perr = strconv.Atoi(strings.TrimPrefix(string(v.Val), ":v"))
	}
	if !ok || perr != nil || n < 1 {
		return nil, 0, false, errArrayForm
	}
	for len(p.paramTypes) < n {
		p.paramTypes = append(p.paramTypes, pgtypes.Unspecified)
	}
	var elem pgtypes.OID
	if len(f.Exprs) == 2 {
		_, typName := castArgs(&sqlparser.FuncExpr{Exprs: f.Exprs})
		if elem, _, err = castType(typName); err != nil {
			return nil, 0, false, err
		}
	}
	switch declared := p.paramType(n); {
	case declared == pgtypes.Unknown:
		if elem == 0 {
			elem = columnType(p.table.Columns[col].Type)
		}
		p.paramTypes[n-1], _ = pgtypes.ArrayOf(elem)
	default:
		e, isArray := pgtypes.Element(declared)
		if !isArray {
			return nil, 0, false, pgerror.Errorf(pgerror.WrongObjectType, "op ANY/ALL (array) requires array on right side: parameter $%d is %s", n, declared.Name())
		}
		if elem == 0 {
			elem = e
		}
	}
	if !p.bind {
		return []operand{{typ: elem, param: n, unbound: true}}, 0, false, nil
	}
	return arrayValues(p.args[n-1], elem, n)
}

// arrayError is an array literal ParseArray refused, as array_in reports
// it, with its DETAIL; what names the literal (PostgreSQL quotes it).
func arrayError(err error, what string) *pgerror.Error {
	var ae *pgtypes.ArrayError
	switch {
	case errors.As(err, &ae) && ae.Bounds:
		return pgerror.Errorf(pgerror.ArraySubscriptError, "upper bound cannot be less than lower bound in the array literal %s", what)
	case errors.As(err, &ae):
		return pgerror.Errorf(pgerror.InvalidTextRepresentation, "malformed array literal: %s", what).WithDetail(ae.Detail)
	}
	return pgerror.Errorf(pgerror.InvalidTextRepresentation, "malformed array literal: %s", what)
}

// arrayValues reads an array parameter's text form into its elements.
func arrayValues(arg *string, elem pgtypes.OID, n int) (ops []operand, nulls int, isNull bool, err error) {
	if arg == nil {
		return nil, 0, true, nil
	}
	vals, err := pgtypes.ParseArray(*arg)
	switch {
	case errors.Is(err, pgtypes.ErrNestedArray):
		return nil, 0, false, pgerror.Errorf(pgerror.FeatureNotSupported, "parameter $%d is a multidimensional array, which ANY and ALL do not take here", n)
	case err != nil:
		return nil, 0, false, arrayError(err, fmt.Sprintf("parameter $%d", n)).WithHint("An array parameter is sent as {v1,v2,...}.")
	}
	for _, v := range vals {
		if v == nil {
			nulls++
			continue
		}
		ops = append(ops, operand{typ: elem, text: *v, param: n})
	}
	return ops, nulls, false, nil
}
