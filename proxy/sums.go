package proxy

import (
	"strconv"
	"strings"

	"countwall/ir"
	"countwall/mechanisms"
	"countwall/pgtypes"
	"countwall/proxy/state/release"
)

// A query with SUM or AVG is answered in its select list's order, each
// aggregate typed as PostgreSQL types it over the column as the catalog
// shows it: an integer column is bigint, so its sum and its average are
// numeric; a real column is double precision, and so are they. COUNT is
// bigint. A mechanism that noises them (mechanisms.FloatSums) publishes
// float8 SUM and AVG, never NULL; with countwall.confidence each aggregate's
// interval follows (sum_intervals.go).

// sumColumns are the output columns of a query with sums.
func sumColumns(rt *runtime, q *ir.Query) []Column {
	cols := make([]Column, len(q.GroupBy)+len(q.Aggregates))
	taken := make([]bool, len(cols))
	for _, a := range q.Aggregates {
		cols[a.Position] = Column{Name: a.Alias, Type: aggregateType(rt, q, a)}
		taken[a.Position] = true
	}
	g := 0
	for i := range cols {
		if !taken[i] {
			cols[i] = groupColumn(rt, q, g)
			g++
		}
	}
	return cols
}

// aggregateType is the wire type of one aggregate's column.
func aggregateType(rt *runtime, q *ir.Query, a ir.Aggregate) ColumnType {
	switch {
	case a.Func == ir.FuncCount && rt.float:
		return ColumnFloat8
	case a.Func == ir.FuncCount:
		return ColumnInt8
	case mechanisms.FloatSums(rt.mech):
		return ColumnFloat8
	case rt.catalog.Tables[q.Table].Columns[a.Column].Type == ir.TypeInt:
		return ColumnNumeric
	}
	return ColumnFloat8
}

// sumRows builds the result of an answered query with sums: a row per
// answered cell, in select-list order.
func sumRows(rt *runtime, q *ir.Query, cells *ir.Result, answers []mechanisms.Answer, notice string) *Result {
	res := &Result{Columns: sumColumns(rt, q), Notice: notice}
	floatOut := rt.float
	sumCols := q.SumColumns()
	stored := storedTypes(rt, q)
	for i, a := range answers {
		if a.Dropped {
			continue
		}
		row := make([]Value, len(res.Columns))
		taken := make([]bool, len(row))
		for j, agg := range q.Aggregates {
			taken[agg.Position] = true
			switch {
			case agg.Func == ir.FuncCount:
				row[agg.Position] = answerValue(a, floatOut)
			case a.Sums != nil && j < len(a.Sums.Aggregates):
				row[agg.Position] = Value{Float: a.Sums.Aggregates[j]}
			default:
				row[agg.Position] = sumValue(agg, a.Sums, indexOf(sumCols, agg.Column))
			}
		}
		g := 0
		for j := range row {
			if !taken[j] {
				gv := cells.Cells[i].Group[g]
				row[j] = groupValue(res.Columns[j].Type, stored[g], gv)
				g++
			}
		}
		res.Rows = append(res.Rows, row)
		res.Suppressed = append(res.Suppressed, a.Suppressed)
	}
	res.Tag = "SELECT " + strconv.Itoa(len(res.Rows))
	res.aggregates = q.Aggregates
	return res
}

// sumValue is SUM or AVG of one column from its published figures: NULL
// over no value, as PostgreSQL answers.
func sumValue(agg ir.Aggregate, sums *mechanisms.Sums, k int) Value {
	if sums == nil || k < 0 || k >= len(sums.Columns) || sums.Columns[k].N == 0 {
		return Value{Null: true}
	}
	s := sums.Columns[k]
	switch {
	case s.Int != nil && agg.Func == ir.FuncSum:
		return Value{Text: s.Int.String()}
	case s.Int != nil:
		return Value{Text: pgtypes.FormatNumericAvg(s.Int, s.N)}
	case agg.Func == ir.FuncSum:
		return Value{Float: s.Float}
	}
	return Value{Float: s.Float / float64(s.N)}
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}

// releaseAggregates is the audit's record of a query's aggregates.
func releaseAggregates(q *ir.Query) []release.Aggregate {
	out := make([]release.Aggregate, 0, len(q.Aggregates))
	for _, a := range q.Aggregates {
		out = append(out, release.Aggregate{Func: a.Func.String(), Column: a.Column, Alias: a.Alias})
	}
	return out
}

// releasedSumCells is what an answer with sums sent: each row's group
// values, its COUNT (0 when none is selected) and every aggregate's text
// as the client received it.
func releasedSumCells(res *Result) []release.Cell {
	isAgg := make([]bool, len(res.Columns))
	count := -1
	for _, a := range res.aggregates {
		isAgg[a.Position] = true
		if a.Func == ir.FuncCount && count < 0 {
			count = a.Position
		}
	}
	cells := make([]release.Cell, 0, len(res.Rows))
	for _, row := range res.Rows {
		row = row[:len(row)-res.sumIntervals] // the intervals follow from what was sent
		c := release.Cell{}
		if count >= 0 {
			c.IsFloat = res.Columns[count].Type == ColumnFloat8
			c.Value = row[count].Float
			if !c.IsFloat {
				c.Value = float64(row[count].Int)
			}
		}
		for j, v := range row {
			d := release.Datum{Null: v.Null, Text: v.Text}
			if !isAgg[j] {
				c.Group = append(c.Group, d)
				continue
			}
			if !v.Null {
				d.Text = v.Format(res.Columns[j].Type)
			}
			c.Aggregates = append(c.Aggregates, d)
		}
		cells = append(cells, c)
	}
	return cells
}

// aggregatesText is EXPLAIN's line for a query with sums: each aggregate,
// and whether the values are summed as stored (exact) or clamped to
// tables.NAME.bounds (the mechanisms that noise or withhold sums).
func aggregatesText(q *ir.Query, m mechanisms.Mechanism) string {
	parts := make([]string, 0, len(q.Aggregates))
	for _, a := range q.Aggregates {
		if a.Func == ir.FuncCount {
			parts = append(parts, "count")
		} else {
			parts = append(parts, a.Func.String()+"("+a.Column+")")
		}
	}
	if mechanisms.FloatSums(m) || mechanisms.ClampsSums(m) {
		return strings.Join(parts, ", ") + "; each value clamped to its column's bounds (tables." + q.Table + ".bounds), NULL ignored"
	}
	return strings.Join(parts, ", ") + "; values summed as stored, not clamped (NULL ignored)"
}
