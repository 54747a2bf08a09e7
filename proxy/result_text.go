package proxy

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Format renders the value as text, as psql shows a value of type t.
func (v Value) Format(t ColumnType) string {
	switch {
	case v.Null:
		return "NULL"
	case t == ColumnInt8:
		return strconv.FormatInt(v.Int, 10)
	case t == ColumnFloat8:
		return strconv.FormatFloat(v.Float, 'f', -1, 64)
	case t == ColumnNumeric:
		return v.Text
	default:
		return v.Text
	}
}

// WriteTable prints the result as psql prints it: an aligned table with
// the row count (a withheld count is NULL, as on the wire), then the
// notice if any.
func (r *Result) WriteTable(w io.Writer) {
	if len(r.Columns) == 0 {
		fmt.Fprintln(w, r.Tag)
		return
	}
	cells := make([][]string, 0, len(r.Rows)+1)
	header := make([]string, len(r.Columns))
	for i, c := range r.Columns {
		header[i] = c.Name
	}
	cells = append(cells, header)
	for _, row := range r.Rows {
		line := make([]string, len(row))
		for i, v := range row {
			line[i] = v.Format(r.Columns[i].Type)
		}
		cells = append(cells, line)
	}
	widths := make([]int, len(header))
	for _, line := range cells {
		for i, c := range line {
			widths[i] = max(widths[i], len(c))
		}
	}
	for n, line := range cells {
		parts := make([]string, len(line))
		for i, c := range line {
			parts[i] = fmt.Sprintf("%-*s", widths[i], c)
		}
		fmt.Fprintln(w, " "+strings.TrimRight(strings.Join(parts, " | "), " "))
		if n == 0 {
			seps := make([]string, len(widths))
			for i, wd := range widths {
				seps[i] = strings.Repeat("-", wd)
			}
			fmt.Fprintln(w, "-"+strings.Join(seps, "-+-")+"-")
		}
	}
	// As psql says it: "(1 row)", "(2 rows)".
	if len(r.Rows) == 1 {
		fmt.Fprintln(w, "(1 row)")
	} else {
		fmt.Fprintf(w, "(%d rows)\n", len(r.Rows))
	}
	if r.Notice != "" {
		fmt.Fprintln(w, "NOTICE:", r.Notice)
	}
}
