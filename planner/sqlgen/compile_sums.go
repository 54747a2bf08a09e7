package sqlgen

import (
	"strings"

	"countwall/ir"
	"countwall/pglex"
	"countwall/planner/plan"
)

// Sums: a query with SUM or AVG is rendered as one aggregate whose rows
// are the cells (or, when contributions or bounds are asked for, one per
// cell and privacy unit, which Go folds into cells, ordered by cell and unit
// under bounds). Each row is laid out as
// plan.SumsLayout says. An integer column is summed in two halves, v>>32 and
// v&(2^32-1), so that no SQL sum can overflow (SQLite's SUM fails on
// overflow, a row's value deciding the error); Go adds them exactly. A
// value that is not a number of its column's type counts as NULL, as a
// guarded expression does.

// SQLiteSums renders a query with sums for SQLite.
func SQLiteSums(t *ir.Table, q *ir.Query, needs ir.Needs) (string, []any, error) {
	sel := &compiler{t: t}
	body := sumsSelect(sel, t, q, needs)
	var where string
	var whereArgs []any
	if q.Where != nil {
		pred, args, err := wherePred(t, q.Where)
		if err != nil {
			return "", nil, err
		}
		where, whereArgs = " WHERE "+pred, args
	}
	if sel.err != nil {
		return "", nil, sel.err
	}
	return body.sql(t, where, true), append(sel.args, whereArgs...), nil
}

// PostgresSums renders a query with sums for PostgreSQL. Its $n are
// numbered, so the WHERE's come first whatever the text's order.
func PostgresSums(t *ir.Table, q *ir.Query, needs ir.Needs, d PostgresDialect) (string, []any, error) {
	w := &compiler{t: t, dialect: d}
	var where string
	if q.Where != nil {
		w.pred(q.Where)
		where = " WHERE " + w.sb.String()
	}
	if w.err != nil {
		return "", nil, w.err
	}
	sel := &compiler{t: t, dialect: d, args: w.args}
	body := sumsSelect(sel, t, q, needs)
	if sel.err != nil {
		return "", nil, sel.err
	}
	return body.sql(t, where, false), sel.args, nil
}

// sumsBody is the rendered select list and grouping of a query with sums.
type sumsBody struct {
	groups []string
	unit   string // the unit column, when the rows are per unit
	// bounded rows are ordered by cell and then unit (Needs.Bound)
	bounded bool
	list    string // what follows the group columns in the select list
}

func (b sumsBody) sql(t *ir.Table, where string, ordered bool) string {
	var sb strings.Builder
	writeSelectPrefix(&sb, b.groups)
	sb.WriteString(b.list)
	sb.WriteString(" FROM " + pglex.QuoteIdentAlways(t.Name))
	sb.WriteString(where)
	keys := b.groups
	if b.unit != "" {
		keys = append(keys[:len(keys):len(keys)], b.unit)
	}
	if len(keys) > 0 {
		sb.WriteString(" GROUP BY " + strings.Join(keys, ", "))
	}
	switch {
	case b.bounded:
		// Every dialect: the fold adds each cell's units in the order read
		// (plan's sums_bounded.go), so the order is part of the answer.
		sb.WriteString(" ORDER BY " + strings.Join(keys, ", "))
	case ordered && len(b.groups) > 0:
		sb.WriteString(" ORDER BY " + strings.Join(b.groups, ", "))
	}
	return sb.String()
}

func sumsSelect(c *compiler, t *ir.Table, q *ir.Query, needs ir.Needs) sumsBody {
	var b sumsBody
	for _, g := range q.GroupBy {
		b.groups = append(b.groups, c.group(g))
	}
	var list []string
	if plan.PerUnitSums(needs) { // the unit itself (plan.SumsLayout)
		b.unit, b.bounded = c.column(t.PrivacyUnit), needs.Bound
		list = append(list, b.unit)
	}
	list = append(list, "COUNT(*)")
	clamp := needs.Clamp || needs.Contributions || needs.Bound
	for _, name := range q.SumColumns() {
		col := t.Columns[name]
		v, fv := c.sumValue(col)
		list = append(list, "COUNT("+v+")")
		if col.Type == ir.TypeInt {
			list = append(list, "SUM(("+v+") >> 32)", "SUM(("+v+") & 4294967295)")
		} else {
			list = append(list, "SUM("+v+")")
		}
		if clamp {
			list = append(list, c.clampedSum(col, fv))
		}
	}
	b.list = strings.Join(list, ", ")
	return b
}

// sumValue is a summed column's value as SQL, NULL where it is not a
// number of the column's type, and the same as a double precision.
func (c *compiler) sumValue(col *ir.Column) (v, fv string) {
	ref := c.column(col.Name)
	if c.dialect != nil {
		return c.dialect.number(col), "(" + c.dialect.number(col) + ")::float8"
	}
	if col.Type == ir.TypeInt {
		v = "CASE WHEN typeof(" + ref + ") = 'integer' THEN " + ref + " END"
		return v, "CAST((" + v + ") AS REAL)"
	}
	v = "CASE WHEN typeof(" + ref + ") IN ('integer', 'real') THEN CAST(" + ref + " AS REAL) END"
	return v, v
}

// clampedSum is the sum of fv clamped to the column's bounds, 0 over no
// value, the bounds bound as parameters.
func (c *compiler) clampedSum(col *ir.Column, fv string) string {
	if col.Bounds == nil {
		c.fail("column %q has no bounds to clamp to", col.Name)
		return "0"
	}
	// The select list's compiler writes nothing else into its builder.
	c.sb.Reset()
	lo := ir.Literal{Kind: ir.LitFloat, Float: col.Bounds.Min}
	hi := ir.Literal{Kind: ir.LitFloat, Float: col.Bounds.Max}
	c.sb.WriteString("CASE WHEN " + fv + " < ")
	c.bind(lo)
	c.sb.WriteString(" THEN ")
	c.bind(lo)
	c.sb.WriteString(" WHEN " + fv + " > ")
	c.bind(hi)
	c.sb.WriteString(" THEN ")
	c.bind(hi)
	c.sb.WriteString(" ELSE " + fv + " END")
	expr := c.sb.String()
	c.sb.Reset()
	if c.dialect != nil {
		return "COALESCE(SUM(" + expr + "), 0)"
	}
	return "TOTAL(" + expr + ")"
}
