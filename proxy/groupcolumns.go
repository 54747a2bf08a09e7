package proxy

import (
	"math"
	"strconv"

	"countwall/ir"
	"countwall/pgtypes"
)

// An answer's group columns have the types PostgreSQL would give them:
// the column's catalog type (bigint for an integer column, double
// precision for a real one, text; proxy/catalog tells clients the same),
// or the type the select list casts it to (CAST(age AS VARCHAR) is a
// varchar, age::text a text). A driver then reads an integer group as its
// integer type, as it would from PostgreSQL.

// queryColumns are the columns of q's answer: its group columns, then the
// count.
func queryColumns(rt *runtime, q *ir.Query) []Column {
	if q.HasSums() {
		return sumColumns(rt, q)
	}
	cols := make([]Column, 0, len(q.GroupBy)+1)
	for i := range q.GroupBy {
		cols = append(cols, groupColumn(rt, q, i))
	}
	typ := ColumnInt8
	if rt.float {
		typ = ColumnFloat8
	}
	return append(cols, Column{Name: q.Alias, Type: typ})
}

// groupColumn is q's i-th group column.
func groupColumn(rt *runtime, q *ir.Query, i int) Column {
	var t *ir.Table
	if rt.catalog != nil {
		t = rt.catalog.Tables[q.Table]
	}
	cast := ""
	if i < len(q.GroupCasts) {
		cast = q.GroupCasts[i]
	}
	return Column{Name: q.GroupBy[i], Type: groupColumnType(t, q.GroupBy[i], cast)}
}

// groupColumnType is the type of group column g of t, selected cast to
// cast ("" for none).
func groupColumnType(t *ir.Table, g, cast string) ColumnType {
	switch cast {
	case "text":
		return ColumnText
	case "varchar":
		return ColumnVarchar
	}
	var c *ir.Column
	if t != nil {
		c = t.Columns[g]
	}
	switch {
	case c == nil:
		return ColumnText
	case c.Type == ir.TypeInt:
		return ColumnInt8
	case c.Type == ir.TypeReal:
		return ColumnFloat8
	}
	return ColumnText
}

// groupValue is a group's value as a column of type t sends it, the
// column being stored as col says. Text keeps the group's text, which the
// audit records, except where the answer's text is another one: a real
// column cast to text is written as float8out writes it. A stored value
// that is no number of the column's type (a real with a fraction in an
// integer column; text is already read as NULL) is sent as NULL, as the
// grouping reads text in a number column.
func groupValue(t ColumnType, col ir.ColumnType, g ir.GroupValue) Value {
	v := Value{Null: g.Null, Text: g.Text}
	if g.Null {
		return v
	}
	switch t {
	case ColumnInt8:
		n, err := strconv.ParseInt(g.Text, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(g.Text, 64)
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
				return Value{Null: true}
			}
			n = int64(f)
		}
		v.Int = n
	case ColumnFloat8:
		f, err := strconv.ParseFloat(g.Text, 64)
		if err != nil {
			return Value{Null: true}
		}
		v.Float = f
	case ColumnText, ColumnVarchar:
		if f, err := strconv.ParseFloat(g.Text, 64); err == nil && col == ir.TypeReal {
			v.Text = pgtypes.FormatFloat8(f)
		}
	}
	return v
}

// storedTypes are the catalog types of q's group columns (text where the
// catalog has none).
func storedTypes(rt *runtime, q *ir.Query) []ir.ColumnType {
	out := make([]ir.ColumnType, len(q.GroupBy))
	var t *ir.Table
	if rt.catalog != nil {
		t = rt.catalog.Tables[q.Table]
	}
	for i, g := range q.GroupBy {
		out[i] = ir.TypeText
		if t != nil && t.Columns[g] != nil {
			out[i] = t.Columns[g].Type
		}
	}
	return out
}
