package planner

import (
	"github.com/xwb1989/sqlparser"

	"countwall/ir"
)

// col IS NOT DISTINCT FROM v is true or false for every row, never
// unknown: col = v where col is not NULL, false where it is; against NULL
// it is col IS NULL. col IS DISTINCT FROM v is its NOT (rewriteForms
// writes it so), which therefore counts the NULL rows where v is not NULL.
// The value is typed and checked as = types and checks it.

// notDistinct converts col IS NOT DISTINCT FROM v (the rewritten <=>).
func (p *parser) notDistinct(x *sqlparser.ComparisonExpr) (ir.Pred, error) {
	if p.table.Policy.Strict && p.negated {
		return nil, p.policyError("IS DISTINCT FROM")
	}
	col, err := p.leafColumn(x.Left)
	if err != nil {
		return nil, err
	}
	o, err := p.operandOf(x.Right, col)
	if err != nil {
		return nil, err
	}
	ct := p.table.Columns[col].Type
	p.settle(&o, columnType(ct))
	if err := p.checkOperator(col, "=", o); err != nil {
		return nil, err
	}
	if o.null {
		return &ir.IsNull{Column: col}, nil
	}
	eq, err := p.comparePred(col, "=", o)
	if err != nil {
		return nil, err
	}
	return &ir.And{Left: eq, Right: &ir.IsNull{Column: col, Negate: true}}, nil
}
