// Package attacks holds the attack programs of the privacy literature. Each
// one talks SQL through a Querier (over the wire to a running firewall, or
// in process to an Engine), logs what it sends, and scores itself against
// the raw data when it is given it.
package attacks

import (
	"context"
	"countwall/pgerror"
	"countwall/proxy"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Querier is the one thing an attack needs: SQL text in, rows out.
type Querier interface {
	Query(ctx context.Context, sql string) (*Rows, error)
}

// BatchQuerier is a Querier that can have several statements in flight at
// once: QueryBatch sends them all, in order, before it waits for the first
// answer, and returns each statement's answer or error at its index. The
// statements must not depend on one another's answers; a refusal of one
// does not stop the others. The wire pipelines them (one round trip for
// all); in process they run one after another.
type BatchQuerier interface {
	Querier
	QueryBatch(ctx context.Context, sqls []string) ([]*Rows, []error)
}

// QueryAll sends sqls through q in one batch when q is a BatchQuerier, else
// one after another; either way every statement is sent (unless a wrapper
// stops them: the query limit, a spent budget) and answered at its index.
func QueryAll(ctx context.Context, q Querier, sqls []string) ([]*Rows, []error) {
	if b, ok := q.(BatchQuerier); ok {
		return b.QueryBatch(ctx, sqls)
	}
	return queryEach(ctx, q, sqls)
}

// queryEach sends sqls one after another, each awaited.
func queryEach(ctx context.Context, q Querier, sqls []string) ([]*Rows, []error) {
	rows, errs := make([]*Rows, len(sqls)), make([]error, len(sqls))
	for i, sql := range sqls {
		rows[i], errs[i] = q.Query(ctx, sql)
	}
	return rows, errs
}

// Rows is a result in text form, as the wire delivers it.
type Rows = proxy.TextRows

// Count runs a single-cell COUNT query and returns its answer.
func Count(ctx context.Context, q Querier, sql string) (float64, error) {
	rows, err := q.Query(ctx, sql)
	return countOf(rows, err)
}

// countOf reads a single-cell COUNT's answer.
func countOf(rows *Rows, err error) (float64, error) {
	if err != nil {
		return 0, err
	}
	if len(rows.Values) != 1 {
		return 0, fmt.Errorf("expected one row, got %d", len(rows.Values))
	}
	return rows.Float(0, len(rows.Columns)-1)
}

// SQLState is the SQLSTATE of a refusal, or "" when err is not one.
func SQLState(err error) pgerror.Code { return pgerror.SQLState(err) }

// Logged wraps a Querier: it counts statements and writes each one, ended
// with a semicolon, to Log (when set), so that the log runs in psql. It is
// where every attack stops: at Max queries (ErrQueryLimit), once the run's
// context is cancelled (ErrInterrupted: a query cut off then is not counted
// as refused), and after the firewall refused a query for a spent budget,
// when it answers every later query with that refusal without sending it.
type Logged struct {
	Querier Querier
	Log     io.Writer
	Max     int // queries allowed (0: no limit)

	mu      sync.Mutex
	sent    int
	refused int
	spent   error // the budget refusal, once one came
}

// ErrQueryLimit is what Logged answers past its Max queries.
var ErrQueryLimit = errors.New("query limit reached (--max-queries)")

// Query sends sql through the wrapped Querier.
func (l *Logged) Query(ctx context.Context, sql string) (*Rows, error) {
	return l.send(ctx, l.Querier, sql)
}

// send counts, logs and sends sql through q, which is l's own Querier or
// another connection to the same firewall (Through). It is safe for
// concurrent use: the count, the limit and the stop on a spent budget are
// kept under l.mu, so that several connections share one exact count.
func (l *Logged) send(ctx context.Context, q Querier, sql string) (*Rows, error) {
	l.mu.Lock()
	if l.spent != nil {
		l.mu.Unlock()
		return nil, l.spent
	}
	if ctx.Err() != nil {
		l.mu.Unlock()
		return nil, fmt.Errorf("after %d queries: %w", l.sent, interrupted(ctx, ctx.Err()))
	}
	if l.Max > 0 && l.sent >= l.Max {
		l.mu.Unlock()
		return nil, fmt.Errorf("after %d queries: %w", l.sent, ErrQueryLimit)
	}
	l.sent++
	l.write(sql)
	l.mu.Unlock()
	rows, err := q.Query(ctx, sql)
	if err != nil && ctx.Err() != nil {
		return nil, interrupted(ctx, err)
	}
	if err != nil {
		l.mu.Lock()
		l.refused++
		if IsBudgetExhausted(err) && l.spent == nil {
			l.spent = err
		}
		l.mu.Unlock()
	}
	return rows, err
}

// QueryBatch sends sqls through the wrapped Querier in one batch, counted,
// limited and logged as one Query each, in order: past Max the rest are
// answered with ErrQueryLimit unsent, and after a spent budget none is
// sent. Statements already in flight when a refusal for a spent budget
// comes back were sent: they are counted, and answered as the firewall
// answered them.
func (l *Logged) QueryBatch(ctx context.Context, sqls []string) ([]*Rows, []error) {
	return l.sendBatch(ctx, l.Querier, sqls)
}

// sendBatch is send for several statements in flight at once.
func (l *Logged) sendBatch(ctx context.Context, q Querier, sqls []string) ([]*Rows, []error) {
	rows, errs := make([]*Rows, len(sqls)), make([]error, len(sqls))
	l.mu.Lock()
	allowed := len(sqls)
	var stop error
	switch {
	case l.spent != nil:
		allowed, stop = 0, l.spent
	case ctx.Err() != nil:
		allowed, stop = 0, fmt.Errorf("after %d queries: %w", l.sent, interrupted(ctx, ctx.Err()))
	case l.Max > 0 && l.sent+allowed > l.Max:
		allowed = max(l.Max-l.sent, 0)
		stop = fmt.Errorf("after %d queries: %w", l.Max, ErrQueryLimit)
	}
	for _, sql := range sqls[:allowed] {
		l.write(sql)
	}
	l.sent += allowed
	l.mu.Unlock()
	for i := allowed; i < len(sqls); i++ {
		errs[i] = stop
	}
	if allowed == 0 {
		return rows, errs
	}
	got, gotErrs := QueryAll(ctx, q, sqls[:allowed])
	copy(rows, got)
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, err := range gotErrs {
		switch {
		case err == nil:
			continue
		case ctx.Err() != nil:
			rows[i], err = nil, interrupted(ctx, err)
		default:
			l.refused++
			if IsBudgetExhausted(err) && l.spent == nil {
				l.spent = err
			}
		}
		errs[i] = err
	}
	return rows, errs
}

// Setup sends a session statement (SET, SHOW) through the wrapped Querier:
// written to the log, so that the log replays in psql as the attack ran,
// but not counted, since it asks nothing of the data.
func (l *Logged) Setup(ctx context.Context, sql string) (*Rows, error) {
	l.mu.Lock()
	l.write(sql)
	l.mu.Unlock()
	return l.Querier.Query(ctx, sql)
}

// Through is q, another connection to the firewall l wraps, counted,
// limited and logged by l as l's own statements are: an attack that spreads
// its queries over several connections (idp-reconstruct --parallel) keeps
// one exact query count, one --max-queries and one stop on a spent budget.
// The log holds every connection's statements in the order they were sent.
func (l *Logged) Through(q Querier) Querier { return &loggedVia{l: l, q: q} }

// loggedVia is a connection sending through a Logged it does not own.
type loggedVia struct {
	l *Logged
	q Querier
}

func (v *loggedVia) Query(ctx context.Context, sql string) (*Rows, error) {
	return v.l.send(ctx, v.q, sql)
}

func (v *loggedVia) QueryBatch(ctx context.Context, sqls []string) ([]*Rows, []error) {
	return v.l.sendBatch(ctx, v.q, sqls)
}

// Setup sends a session statement on this connection, logged, not counted.
func (v *loggedVia) Setup(ctx context.Context, sql string) (*Rows, error) {
	v.l.mu.Lock()
	v.l.write(sql)
	v.l.mu.Unlock()
	return v.q.Query(ctx, sql)
}

// Unwrap is the connection below the log.
func (v *loggedVia) Unwrap() Querier { return v.q }

// write logs one statement, ended with a semicolon; l.mu is held.
func (l *Logged) write(sql string) {
	if l.Log != nil {
		fmt.Fprintln(l.Log, strings.TrimRight(strings.TrimSpace(sql), ";")+";")
	}
}

// setupQuerier is a Querier that counts queries and can send a session
// statement without counting it (Logged, and wrappers over it).
type setupQuerier interface {
	Setup(ctx context.Context, sql string) (*Rows, error)
}

// sessionQuery sends a session statement through q, uncounted when q counts.
func sessionQuery(ctx context.Context, q Querier, sql string) (*Rows, error) {
	if s, ok := q.(setupQuerier); ok {
		return s.Setup(ctx, sql)
	}
	return q.Query(ctx, sql)
}

// Unwrap is the Querier below the log.
func (l *Logged) Unwrap() Querier { return l.Querier }

// unwrapped is q below any logging or counting wrappers: read-backs (SHOW
// mechanism, SHOW budget) go there, neither logged nor counted, since they
// are not part of the attack.
func unwrapped(q Querier) Querier {
	for {
		u, ok := q.(interface{ Unwrap() Querier })
		if !ok {
			return q
		}
		q = u.Unwrap()
	}
}

// Sent is how many statements went through.
func (l *Logged) Sent() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sent
}

// Refused is how many statements the firewall refused.
func (l *Logged) Refused() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused
}

// Spent reads the analyst's spending back with SHOW budget: epsilon spent per
// accounting kind. It is not counted as an attack query.
func Spent(ctx context.Context, q Querier) (map[string]float64, error) {
	rows, err := unwrapped(q).Query(ctx, "SHOW budget")
	if err != nil {
		return nil, err
	}
	spent := map[string]float64{}
	for i, row := range rows.Values {
		if len(row) < 2 {
			continue
		}
		eps, err := rows.Float(i, 1)
		if err != nil {
			return nil, err
		}
		spent[row[0]] = eps
	}
	return spent, nil
}
