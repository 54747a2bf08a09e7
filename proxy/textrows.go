package proxy

import (
	"fmt"
	"strconv"
)

// TextRows is a result in text form, as the wire delivers it to a client:
// what the attack programs read, from the wire or from an Engine session.
// NULL is the empty string.
type TextRows struct {
	Columns []string
	Values  [][]string
}

// Text renders the result as the wire would: integers in decimal, floats in
// the shortest form that reads back the same.
func (r *Result) Text() *TextRows {
	rows := &TextRows{Columns: make([]string, len(r.Columns)), Values: make([][]string, len(r.Rows))}
	for i, c := range r.Columns {
		rows.Columns[i] = c.Name
	}
	for n, row := range r.Rows {
		vals := make([]string, len(row))
		for i, v := range row {
			switch {
			case v.Null:
				vals[i] = ""
			case r.Columns[i].Type == ColumnInt8:
				vals[i] = strconv.FormatInt(v.Int, 10)
			case r.Columns[i].Type == ColumnFloat8:
				vals[i] = strconv.FormatFloat(v.Float, 'g', -1, 64)
			default:
				vals[i] = v.Text
			}
		}
		rows.Values[n] = vals
	}
	return rows
}

// Int reads one value as an integer (a float answer is rounded half away
// from zero).
func (r *TextRows) Int(row, col int) (int64, error) {
	f, err := r.Float(row, col)
	if err != nil {
		return 0, err
	}
	if f < 0 {
		return int64(f - 0.5), nil
	}
	return int64(f + 0.5), nil
}

// Float reads one value as a number. A NULL, which in a count column is a
// count the mechanism withheld, reads as 0: what the mechanism publishes
// for it (its claim says "published as 0"), and what the attacks reason
// with. Errors name the position, never the value.
func (r *TextRows) Float(row, col int) (float64, error) {
	if row >= len(r.Values) || col >= len(r.Values[row]) {
		return 0, fmt.Errorf("no value at row %d column %d (%d rows)", row, col, len(r.Values))
	}
	if r.Values[row][col] == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(r.Values[row][col], 64)
	if err != nil {
		return 0, fmt.Errorf("value at row %d column %d is not a number", row, col)
	}
	return f, nil
}
