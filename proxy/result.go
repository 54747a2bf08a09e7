package proxy

import "countwall/ir"

// ColumnType is the wire-facing type of an output column.
type ColumnType int

const (
	ColumnText      ColumnType = iota // text group columns, SHOW output
	ColumnInt8                        // counts, integer group columns
	ColumnFloat8                      // real answers (noise added by idp/bdp), real group columns
	ColumnBool                        // schema discovery's flags: Value.Int 1 is true
	ColumnTextArray                   // schema discovery's arrays: Value.Text is the array's text form
	ColumnInt8Array
	ColumnNumeric // exact decimals (SUM and AVG over an integer column): Value.Text is the number's text
	ColumnVarchar // a group column selected as CAST(col AS VARCHAR)
)

// Column describes one output column.
type Column struct {
	Name string
	Type ColumnType
}

// Value is one output value. Null is set for SQL NULL (a NULL group value).
type Value struct {
	Null  bool
	Text  string
	Int   int64
	Float float64
}

// Result is the answer to one statement, ready for any front end to encode.
type Result struct {
	Columns []Column
	Rows    [][]Value
	// Suppressed[i] is true when row i's count was withheld by the
	// mechanism: its value is NULL, and the notice names the row.
	Suppressed []bool
	// Tag is the PostgreSQL command tag: "SELECT 3", "SET", "SHOW".
	Tag string
	// Notice, when non-empty, tells the analyst what the answer cost and what
	// budget remains; the wire sends it as a NoticeResponse.
	Notice string
	// intervals is set when the last columns are ci_low and ci_high, after
	// the count (SET countwall.confidence).
	intervals bool
	// groupsAfter is how many group columns the select list names after
	// the count (ir.Query.GroupsAfterCount): the answer is built and
	// audited with the count last, and inSelectOrder moves it.
	groupsAfter int
	// aggregates are a query with sums' aggregates, whose columns are
	// placed by their positions (nil for any other answer).
	aggregates []ir.Aggregate
	// sumIntervals is how many interval columns follow an answer with
	// sums' own (sum_intervals.go).
	sumIntervals int
}

// countColumn is the index of an answer's count column: the last, or the
// one before the interval columns.
func (r *Result) countColumn() int {
	if r.intervals {
		return len(r.Columns) - 1 - len(intervalColumns)
	}
	return len(r.Columns) - 1
}

// inSelectOrder is the answer with its columns in the select list's order:
// the count, and the interval columns right after it, where the analyst
// wrote COUNT(*) (SELECT COUNT(*), sex ...). It is the answer itself when
// the count is last; otherwise a copy, since the audit and the notices
// read the answer with its count last.
func (r *Result) inSelectOrder() *Result {
	if r == nil || r.groupsAfter == 0 {
		return r
	}
	count := r.countColumn()
	out := *r
	out.groupsAfter = 0
	out.Columns = selectOrder(r.Columns, count, r.groupsAfter)
	out.Rows = make([][]Value, len(r.Rows))
	for i, row := range r.Rows {
		out.Rows[i] = selectOrder(row, count, r.groupsAfter)
	}
	return &out
}

// selectOrder moves the last after of the group columns before count to
// after the count's block (the count and its interval columns).
func selectOrder[T any](xs []T, count, after int) []T {
	before := count - after
	out := make([]T, 0, len(xs))
	out = append(out, xs[:before]...)
	out = append(out, xs[count:]...)
	return append(out, xs[before:count]...)
}
