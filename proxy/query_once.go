package proxy

import (
	"context"
	"io"

	"countwall/config"
	"countwall/pgerror"
)

// QueryOnce is `countwall query`: one statement answered in process by an
// Engine opened on cfg and closed after, charged to analyst, printed to w
// as psql prints a result; an error reads as psql prints one.
func QueryOnce(ctx context.Context, w io.Writer, cfg *config.Config, analyst, sql string) error {
	engine, err := Open(ctx, cfg, Options{})
	if err != nil {
		return err
	}
	defer engine.Close()
	res, err := engine.Query(ctx, analyst, sql)
	if err != nil {
		return pgerror.AsPSQL(err)
	}
	res.WriteTable(w)
	return nil
}
