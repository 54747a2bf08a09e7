package planner

import (
	"strconv"

	"github.com/xwb1989/sqlparser"

	"countwall/ir"
	"countwall/pgerror"
)

// selItem is one select-list item: a group column, or the count (col "").
// cast is the canonical type a group column is cast to ("" for none): a
// cast to text, varchar or the column's own type, which names the same
// groups and keeps the column's name, as in PostgreSQL.
type selItem struct {
	col  string
	cast string
}

// selectList reads the aggregates into q and returns the items selected,
// in order; q.GroupsAfterCount says where the count is among them. A
// select list of one COUNT keeps the COUNT vocabulary; one with a SUM or an
// AVG lists every aggregate in q.Aggregates (sums.go).
func (p *parser) selectList(exprs sqlparser.SelectExprs, q *ir.Query) ([]selItem, error) {
	var items []selItem
	var aggs []ir.Aggregate
	counts := 0
	for i, se := range exprs {
		switch e := se.(type) {
		case *sqlparser.StarExpr:
			return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "SELECT * is not supported: select COUNT(*) and, optionally, the GROUP BY columns")
		case *sqlparser.Nextval:
			return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "NEXT VALUE is not supported")
		case *sqlparser.AliasedExpr:
			item, isColumn, err := p.groupItem(e.Expr)
			if err != nil {
				return nil, err
			}
			if isColumn {
				if !e.As.IsEmpty() {
					return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "aliases on group columns are not supported (column %q)", item.col)
				}
				items = append(items, item)
				if len(aggs) > 0 {
					q.GroupsAfterCount++
				}
				continue
			}
			agg, err := p.selectAggregate(e.Expr, q, &counts)
			if err != nil {
				return nil, err
			}
			agg.Position = i
			if !e.As.IsEmpty() {
				agg.Alias = e.As.String()
			}
			aggs = append(aggs, agg)
			items = append(items, selItem{})
		}
	}
	if len(aggs) == 0 {
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "a query must select COUNT(*); bare columns are not answered")
	}
	return items, p.finishAggregates(aggs, counts, q)
}

// groupItem reads a group column, plain or cast; isColumn is false for
// anything else.
func (p *parser) groupItem(e sqlparser.Expr) (item selItem, isColumn bool, err error) {
	switch x := e.(type) {
	case *sqlparser.ColName:
		name, err := p.column(x)
		return selItem{col: name}, true, err
	case *sqlparser.FuncExpr:
		if x.Name.Lowered() != castCall {
			return selItem{}, false, nil
		}
		inner, typ := castArgs(x)
		col, ok := inner.(*sqlparser.ColName)
		if !ok {
			if f, isCount := inner.(*sqlparser.FuncExpr); isCount && f.Name.Lowered() == "count" {
				return selItem{}, false, pgerror.Errorf(pgerror.FeatureNotSupported, "a cast of COUNT to %s is not supported: the count is a bigint", typ)
			}
			return selItem{}, false, nil
		}
		name, err := p.column(col)
		if err != nil {
			return selItem{}, false, err
		}
		if err := p.checkColumnCast(name, typ, true); err != nil {
			return selItem{}, false, err
		}
		return selItem{col: name, cast: typ}, true, nil
	}
	return selItem{}, false, nil
}

// castArgs are a cast call's operand and canonical type.
func castArgs(f *sqlparser.FuncExpr) (sqlparser.Expr, string) {
	var inner sqlparser.Expr
	typ := ""
	if len(f.Exprs) == 2 {
		if a, ok := f.Exprs[0].(*sqlparser.AliasedExpr); ok {
			inner = a.Expr
		}
		if a, ok := f.Exprs[1].(*sqlparser.AliasedExpr); ok {
			if c, ok := a.Expr.(*sqlparser.ColName); ok {
				typ = c.Name.String()
			}
		}
	}
	return inner, typ
}

// checkColumnCast allows a cast of column col to typ where it names the
// same values: to the column's own type anywhere, and, in the select list
// and GROUP BY (toText), to text or varchar.
func (p *parser) checkColumnCast(col, typ string, toText bool) error {
	ct := p.table.Columns[col].Type
	switch {
	case typ == "text" || typ == "varchar":
		if ct == ir.TypeText || toText {
			return nil
		}
	case ct == ir.TypeInt && typ == "int8", ct == ir.TypeReal && typ == "float8":
		return nil
	}
	if toText {
		return pgerror.Errorf(pgerror.FeatureNotSupported, "CAST(%s AS %s) is not supported: a group column may be cast to text, varchar or its own type", col, typ)
	}
	return pgerror.Errorf(pgerror.FeatureNotSupported, "CAST(%s AS %s) is not supported in a condition: compare the column itself, or cast it to its own type", col, typ)
}

// ordinal reads GROUP BY n and ORDER BY n: the n-th select-list item, as in
// PostgreSQL; ok is false for anything but a constant.
func ordinal(e sqlparser.Expr, items []selItem, clause string) (item selItem, ok bool, err error) {
	for {
		paren, isParen := e.(*sqlparser.ParenExpr)
		if !isParen {
			break
		}
		e = paren.Expr // (1) is 1, as PostgreSQL's grammar reads it
	}
	switch e.(type) {
	case *sqlparser.NullVal, sqlparser.BoolVal:
		return selItem{}, true, pgerror.Errorf(pgerror.SyntaxError, "non-integer constant in %s", clause)
	}
	v, isConst := e.(*sqlparser.SQLVal)
	if !isConst || v.Type == sqlparser.ValArg {
		return selItem{}, false, nil
	}
	if v.Type != sqlparser.IntVal {
		return selItem{}, true, pgerror.Errorf(pgerror.SyntaxError, "non-integer constant in %s", clause)
	}
	n, err := strconv.Atoi(string(v.Val))
	if err != nil || n < 1 || n > len(items) {
		return selItem{}, true, pgerror.Errorf(pgerror.InvalidColumnReference, "%s position %s is not in select list", clause, string(v.Val))
	}
	return items[n-1], true, nil
}

// isConstant reports whether e is a constant expression, the same for
// every row: constants, casts of them, signs and + - * between them
// (PostgreSQL evaluates a division when it runs, which may fail).
func isConstant(e sqlparser.Expr) bool {
	switch x := e.(type) {
	case *sqlparser.SQLVal:
		return x.Type != sqlparser.ValArg
	case *sqlparser.NullVal, sqlparser.BoolVal:
		return true
	case *sqlparser.ParenExpr:
		return isConstant(x.Expr)
	case *sqlparser.UnaryExpr:
		return (x.Operator == sqlparser.UPlusStr || x.Operator == sqlparser.UMinusStr) && isConstant(x.Expr)
	case *sqlparser.BinaryExpr:
		switch x.Operator {
		case sqlparser.PlusStr, sqlparser.MinusStr, sqlparser.MultStr:
			return isConstant(x.Left) && isConstant(x.Right)
		}
	case *sqlparser.FuncExpr:
		inner, _ := castArgs(x)
		return x.Name.Lowered() == castCall && inner != nil && isConstant(inner)
	}
	return false
}

// groupBy checks that the GROUP BY columns are exactly the group columns
// selected and sets q.GroupBy to them in the select list's order. A column
// selected cast is grouped by the same cast or by the column itself.
func (p *parser) groupBy(groups sqlparser.GroupBy, items []selItem, q *ir.Query) error {
	var grouped []selItem
	constants := false
	for _, g := range groups {
		item, isOrdinal, err := ordinal(g, items, "GROUP BY")
		if err != nil {
			return err
		}
		if isOrdinal && item.col == "" {
			return pgerror.Errorf(pgerror.GroupingError, "aggregate functions are not allowed in GROUP BY")
		}
		if !isOrdinal {
			var isColumn bool
			if item, isColumn, err = p.groupItem(g); err != nil {
				return err
			}
			if !isColumn && isConstant(g) {
				constants = true // one value for every row: it splits no group
				continue
			}
			if !isColumn {
				return pgerror.Errorf(pgerror.GroupingError, "GROUP BY accepts column names, their casts to text and select-list positions only")
			}
		}
		grouped = append(grouped, item)
	}
	plain, err := sameColumns(items, grouped)
	if err != nil {
		return err
	}
	if constants && len(grouped) == 0 {
		// One group of every row: PostgreSQL answers no row when no row
		// matches, which would tell that none does.
		return pgerror.Errorf(pgerror.FeatureNotSupported, "GROUP BY a constant (+1, 1::int) puts every row in one group: leave GROUP BY out for the same count; GROUP BY 1 names the first select-list item")
	}
	q.GroupBy, q.GroupCasts = plain, selectedCasts(items)
	for _, g := range q.GroupBy {
		if g == p.table.PrivacyUnit {
			return pgerror.Errorf(pgerror.InsufficientPrivilege, "GROUP BY the privacy-unit column %q is not allowed", g)
		}
	}
	return p.checkGroupLimit(q.GroupBy)
}

// selectedCasts are the casts of the group columns selected, in the select
// list's order; nil when none is cast.
func selectedCasts(items []selItem) []string {
	var casts []string
	cast := false
	for _, s := range items {
		if s.col != "" {
			casts = append(casts, s.cast)
			cast = cast || s.cast != ""
		}
	}
	if !cast {
		return nil
	}
	return casts
}

// sameColumns checks the items selected against those grouped by and
// returns the group columns in the select list's order.
func sameColumns(items, grouped []selItem) ([]string, error) {
	var selected []string
	for _, s := range items {
		if s.col == "" {
			continue
		}
		found := false
		for _, g := range grouped {
			found = found || g == s || g == selItem{col: s.col}
		}
		if !found {
			return nil, pgerror.Errorf(pgerror.GroupingError, "column %q must appear in the GROUP BY clause", s.col)
		}
		if contains(selected, s.col) {
			return nil, pgerror.Errorf(pgerror.GroupingError, "column %q is selected twice", s.col)
		}
		selected = append(selected, s.col)
	}
	for _, g := range grouped {
		if !contains(selected, g.col) {
			return nil, pgerror.Errorf(pgerror.GroupingError, "GROUP BY column %q must also be selected", g.col)
		}
	}
	return selected, nil
}

// orderBy reads ORDER BY, which may name group columns only.
func (p *parser) orderBy(orders sqlparser.OrderBy, items []selItem, q *ir.Query) error {
	for _, o := range orders {
		item, isOrdinal, err := ordinal(o.Expr, items, "ORDER BY")
		if err != nil {
			return err
		}
		if isOrdinal && item.col == "" {
			return pgerror.Errorf(pgerror.FeatureNotSupported, "ORDER BY the count is not supported: only GROUP BY columns may be ordered on")
		}
		if !isOrdinal && isConstant(o.Expr) {
			continue // the same for every row: it orders nothing
		}
		if !isOrdinal {
			col, isColumn := o.Expr.(*sqlparser.ColName)
			if f, isCast := o.Expr.(*sqlparser.FuncExpr); isCast && f.Name.Lowered() == castCall {
				var inner sqlparser.Expr
				inner, item.cast = castArgs(f)
				col, isColumn = inner.(*sqlparser.ColName)
			}
			if !isColumn {
				return pgerror.Errorf(pgerror.GroupingError, "ORDER BY accepts group column names and select-list positions only")
			}
			item.col = col.Name.String()
		}
		name := item.col
		if c := p.table.Columns[name]; c != nil && item.cast != "" && c.Type != ir.TypeText && (item.cast == "text" || item.cast == "varchar") {
			// Text orders 10 before 9: not the column's order.
			return pgerror.Errorf(pgerror.FeatureNotSupported, "ORDER BY %s cast to %s is not supported: order on the column itself", name, item.cast)
		}
		if !contains(q.GroupBy, name) {
			return pgerror.Errorf(pgerror.GroupingError, "ORDER BY %q: only GROUP BY columns may be ordered on", name)
		}
		q.OrderBy = append(q.OrderBy, ir.Order{Column: name, Desc: o.Direction == sqlparser.DescScr})
	}
	return nil
}
