package attacks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// Wire is a Querier over the PostgreSQL protocol to a running firewall.
// It uses the simple protocol, so that what it sends is exactly the SQL in
// its log, and pipelines a batch of independent statements (QueryBatch).
//
// pgx opens the connection (TLS, SCRAM, the startup parameters), then hands
// it over: an attack sends millions of one-row statements, one at a time
// per connection, and pgx's general machinery costs more than the statement
// itself on the client's side (a timer armed and stopped around every write
// to guard against a deadlock that one small Query message cannot cause, a
// result reader per statement). Each statement here is one Query message
// written, and the answer read up to ReadyForQuery.
type Wire struct {
	nc net.Conn
	fe *pgproto3.Frontend
	// broken is why the connection can no longer be used: a statement was
	// cut off midway (its context ended) or the socket failed.
	broken error
}

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
	hc, err := conn.PgConn().Hijack()
	if err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("taking over the connection to the firewall: %w", err)
	}
	return &Wire{nc: hc.Conn, fe: hc.Frontend}, nil
}

// Close ends the session (Terminate) and the connection.
func (w *Wire) Close() error {
	if w.broken == nil {
		w.fe.Send(&pgproto3.Terminate{})
		w.fe.Flush() //nolint:errcheck // the close below reports what matters
	}
	w.broken = net.ErrClosed
	return w.nc.Close()
}

// Query sends sql and reads every row as text.
func (w *Wire) Query(ctx context.Context, sql string) (*Rows, error) {
	if err := w.usable(ctx); err != nil {
		return nil, err
	}
	// A cancelled context wakes the read or write in flight; the statement's
	// answer is then abandoned and the connection with it.
	cut := context.AfterFunc(ctx, func() { w.nc.SetDeadline(time.Now()) }) //nolint:errcheck // a closed socket fails the read anyway
	rows, err := w.exchange(sql)
	if !cut() {
		w.broken = ctx.Err()
		return nil, ctx.Err()
	}
	return rows, err
}

// maxInFlight bounds the statements a batch has in flight: a batch's
// Query messages are written before any answer is read, so the answers
// waiting in the socket's buffers must stay well under what those buffers
// hold (a few kilobytes for 64 one-row answers), or both sides would block
// writing.
const maxInFlight = 64

// QueryBatch pipelines sqls: it writes up to maxInFlight Query messages in
// one write, then reads their answers, each up to its own ReadyForQuery.
// Each Query message is its own implicit transaction, so a refusal of one
// statement leaves the others as they would be alone, and the statements,
// as the log shows them, are exactly what is sent.
func (w *Wire) QueryBatch(ctx context.Context, sqls []string) ([]*Rows, []error) {
	rows, errs := make([]*Rows, len(sqls)), make([]error, len(sqls))
	for start := 0; start < len(sqls); start += maxInFlight {
		end := min(start+maxInFlight, len(sqls))
		if err := w.usable(ctx); err != nil {
			for i := start; i < len(sqls); i++ {
				errs[i] = err
			}
			return rows, errs
		}
		cut := context.AfterFunc(ctx, func() { w.nc.SetDeadline(time.Now()) }) //nolint:errcheck // a closed socket fails the read anyway
		w.pipeline(sqls[start:end], rows[start:end], errs[start:end])
		if !cut() {
			w.broken = ctx.Err()
			for i := start; i < end; i++ {
				rows[i], errs[i] = nil, ctx.Err()
			}
		}
	}
	return rows, errs
}

// pipeline writes every statement of sqls, then reads their answers into
// rows and errs, in order.
func (w *Wire) pipeline(sqls []string, rows []*Rows, errs []error) {
	for _, sql := range sqls {
		w.fe.Send(&pgproto3.Query{String: sql})
	}
	if err := w.fe.Flush(); err != nil {
		w.broken = err
		for i := range errs {
			errs[i] = fmt.Errorf("sending to the firewall: %w", err)
		}
		return
	}
	for i := range sqls {
		rows[i], errs[i] = w.answer()
	}
}

// usable is why the connection cannot take a statement now, nil when it can.
func (w *Wire) usable(ctx context.Context) error {
	if w.broken != nil {
		return fmt.Errorf("the connection to the firewall is unusable: %w", w.broken)
	}
	return ctx.Err()
}

// exchange writes one Query message and reads the answer to its
// ReadyForQuery: the rows of every result as text, or the first error.
func (w *Wire) exchange(sql string) (*Rows, error) {
	w.fe.Send(&pgproto3.Query{String: sql})
	if err := w.fe.Flush(); err != nil {
		w.broken = err
		return nil, fmt.Errorf("sending to the firewall: %w", err)
	}
	return w.answer()
}

// answer reads one Query message's answer up to its ReadyForQuery.
func (w *Wire) answer() (*Rows, error) {
	if w.broken != nil {
		return nil, fmt.Errorf("the connection to the firewall is unusable: %w", w.broken)
	}
	out := &Rows{}
	var firstErr error
	for {
		msg, err := w.fe.Receive()
		if err != nil {
			w.broken = err
			return nil, fmt.Errorf("reading the firewall's answer: %w", err)
		}
		switch m := msg.(type) {
		case *pgproto3.RowDescription:
			out.Columns = make([]string, len(m.Fields))
			for i, f := range m.Fields {
				out.Columns[i] = string(f.Name)
			}
		case *pgproto3.DataRow:
			vals := make([]string, len(m.Values))
			for i, v := range m.Values {
				vals[i] = string(v)
			}
			out.Values = append(out.Values, vals)
		case *pgproto3.ErrorResponse:
			if firstErr == nil {
				firstErr = pgconn.ErrorResponseToPgError(m)
			}
		case *pgproto3.ReadyForQuery:
			if firstErr != nil {
				return nil, firstErr
			}
			return out, nil
		case *pgproto3.CopyInResponse, *pgproto3.CopyOutResponse, *pgproto3.CopyBothResponse:
			w.broken = errors.New("the firewall started a COPY")
			return nil, w.broken
		}
	}
}
