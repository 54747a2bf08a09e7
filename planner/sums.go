package planner

import (
	"strings"

	"github.com/xwb1989/sqlparser"

	"countwall/ir"
	"countwall/pgerror"
)

// SUM and AVG in the select list: each over one numeric column, beside
// COUNT(*) and one another in any order, NULL left out as PostgreSQL leaves
// it out. The checks are the statement's and the catalog's alone.

// selectAggregate reads one aggregate of the select list: SUM(col),
// AVG(col), or a COUNT (read into q by aggregate, counted in *counts).
func (p *parser) selectAggregate(e sqlparser.Expr, q *ir.Query, counts *int) (ir.Aggregate, error) {
	if f, ok := e.(*sqlparser.FuncExpr); ok {
		switch name := f.Name.Lowered(); name {
		case "sum", "avg":
			return p.sumAggregate(f, name)
		}
	}
	if *counts > 0 {
		// A second COUNT must count what the first does.
		prior := *q
		if err := p.aggregate(e, q); err != nil {
			return ir.Aggregate{}, err
		}
		if q.Agg != prior.Agg || q.Threshold != nil || prior.Threshold != nil {
			return ir.Aggregate{}, pgerror.Errorf(pgerror.FeatureNotSupported, "only one COUNT may be selected")
		}
	} else if err := p.aggregate(e, q); err != nil {
		return ir.Aggregate{}, err
	}
	*counts++
	return ir.Aggregate{Func: ir.FuncCount, Alias: "count"}, nil
}

// sumAggregate reads SUM(col) or AVG(col).
func (p *parser) sumAggregate(f *sqlparser.FuncExpr, name string) (ir.Aggregate, error) {
	upper := strings.ToUpper(name)
	if len(f.Exprs) != 1 {
		return ir.Aggregate{}, pgerror.Errorf(pgerror.UndefinedFunction, "function %s takes one argument", name).
			WithHint(upper + " takes one numeric column, as in " + upper + "(income)")
	}
	arg, ok := f.Exprs[0].(*sqlparser.AliasedExpr)
	if !ok {
		return ir.Aggregate{}, pgerror.Errorf(pgerror.SyntaxError, "%s(*) is not valid: %s takes a numeric column", upper, upper)
	}
	col, ok := arg.Expr.(*sqlparser.ColName)
	if !ok {
		return ir.Aggregate{}, pgerror.Errorf(pgerror.FeatureNotSupported, "%s accepts a column name only", upper)
	}
	if f.Distinct {
		return ir.Aggregate{}, pgerror.Errorf(pgerror.FeatureNotSupported, "%s(DISTINCT ...) is not supported: %s sums every row's value", upper, upper)
	}
	column, err := p.column(col)
	if err != nil {
		return ir.Aggregate{}, err
	}
	if column == p.table.PrivacyUnit {
		return ir.Aggregate{}, pgerror.Errorf(pgerror.InsufficientPrivilege, "%s of the privacy-unit column %q is not allowed", upper, column)
	}
	if p.table.Columns[column].Type == ir.TypeText {
		return ir.Aggregate{}, pgerror.Errorf(pgerror.UndefinedFunction, "function %s(text) does not exist", name).
			WithHint(upper + " takes a numeric column; column " + column + " is text")
	}
	fn := ir.FuncSum
	if name == "avg" {
		fn = ir.FuncAvg
	}
	return ir.Aggregate{Func: fn, Column: column, Alias: name}, nil
}

// finishAggregates sets q's aggregates: a lone COUNT keeps the COUNT
// vocabulary (q.Agg and q.Alias), and a list with a SUM or an AVG is kept
// whole in q.Aggregates, where a threshold has no place.
func (p *parser) finishAggregates(aggs []ir.Aggregate, counts int, q *ir.Query) error {
	if counts == len(aggs) {
		if counts > 1 {
			return pgerror.Errorf(pgerror.FeatureNotSupported, "only one COUNT may be selected")
		}
		q.Alias = aggs[0].Alias
		return nil
	}
	if q.Threshold != nil {
		return pgerror.Errorf(pgerror.FeatureNotSupported, "a threshold COUNT(*) > b is answered alone, not beside SUM or AVG")
	}
	q.Aggregates = aggs
	q.GroupsAfterCount = 0 // the aggregates' positions place every column
	return nil
}
