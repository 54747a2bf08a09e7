package attacks

import (
	"context"
	"strconv"

	"countwall/proxy"
)

// Session is the part of an in-process engine session a Querier needs.
type Session interface {
	Exec(ctx context.Context, sql string, args []*string) (*proxy.Result, error)
}

// InProcess is a Querier over an Engine session, with no network between.
type InProcess struct{ Session Session }

// Query runs sql in the session.
func (p InProcess) Query(ctx context.Context, sql string) (*Rows, error) {
	res, err := p.Session.Exec(ctx, sql, nil)
	if err != nil {
		return nil, err
	}
	rows := &Rows{Columns: make([]string, len(res.Columns)), Values: make([][]string, len(res.Rows))}
	for i, c := range res.Columns {
		rows.Columns[i] = c.Name
	}
	for r, row := range res.Rows {
		vals := make([]string, len(row))
		for i, v := range row {
			switch {
			case v.Null:
				vals[i] = ""
			case res.Columns[i].Type == proxy.ColumnInt8:
				vals[i] = strconv.FormatInt(v.Int, 10)
			case res.Columns[i].Type == proxy.ColumnFloat8:
				vals[i] = strconv.FormatFloat(v.Float, 'g', -1, 64)
			default:
				vals[i] = v.Text
			}
		}
		rows.Values[r] = vals
	}
	return rows, nil
}
