package attacks

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Wire is a Querier over the PostgreSQL protocol to a running firewall.
// It uses the simple protocol, so that what it sends is exactly the SQL in
// its log.
type Wire struct{ conn *pgx.Conn }

// Dial connects to dsn (a postgres:// URL or key=value string).
func Dial(ctx context.Context, dsn string) (*Wire, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parsing the DSN: %w", err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the firewall: %w", err)
	}
	return &Wire{conn: conn}, nil
}

// Close ends the connection.
func (w *Wire) Close() error { return w.conn.Close(context.Background()) }

// Query sends sql and reads every row as text.
func (w *Wire) Query(ctx context.Context, sql string) (*Rows, error) {
	res := w.conn.PgConn().Exec(ctx, sql)
	results, err := res.ReadAll()
	if err != nil {
		return nil, err
	}
	out := &Rows{}
	for _, r := range results {
		if r.Err != nil {
			return nil, r.Err
		}
		if len(r.FieldDescriptions) == 0 {
			continue
		}
		out.Columns = make([]string, len(r.FieldDescriptions))
		for i, f := range r.FieldDescriptions {
			out.Columns[i] = f.Name
		}
		for _, row := range r.Rows {
			vals := make([]string, len(row))
			for i, v := range row {
				vals[i] = string(v)
			}
			out.Values = append(out.Values, vals)
		}
	}
	return out, nil
}
