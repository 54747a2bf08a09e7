package attacks

import (
	"context"

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
	return res.Text(), nil
}

// QueryBatch runs sqls one after another: in process there is no round
// trip to save.
func (p InProcess) QueryBatch(ctx context.Context, sqls []string) ([]*Rows, []error) {
	return queryEach(ctx, p, sqls)
}
