package attacks

import (
	"context"
	"sync"
)

// reconQuerier counts what the attack sends and turns the stop of the
// logging querier below (a spent budget, the query limit) into errStopped.
// Under --parallel each connection has its own reconQuerier, all sharing one
// tally.
type reconQuerier struct {
	q Querier
	t *reconTally
}

// reconTally is what the connections of one reconstruction share: the
// queries sent, the stop that ended the attack, and whether a worker halted
// the others. It is safe for concurrent use.
type reconTally struct {
	mu     sync.Mutex
	n      int
	stop   error // the refusal or limit that ended the attack
	halted bool  // a worker failed: the others send nothing more
}

func newReconQuerier(q Querier) *reconQuerier { return &reconQuerier{q: q, t: &reconTally{}} }

// through is a reconQuerier over another connection, sharing c's tally.
func (c *reconQuerier) through(q Querier) *reconQuerier { return &reconQuerier{q: q, t: c.t} }

func (c *reconQuerier) Query(ctx context.Context, sql string) (*Rows, error) {
	t := c.t
	t.mu.Lock()
	halted := t.halted
	t.mu.Unlock()
	if halted {
		return nil, errStopped
	}
	rows, err := c.q.Query(ctx, sql)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil && Stopped(err) {
		if t.stop == nil {
			t.stop = err
		}
		t.halted = true
		return nil, errStopped
	}
	t.n++
	return rows, err
}

// QueryBatch sends sqls through the querier below in one batch, each
// counted as Query counts it: a stop (a spent budget, the query limit)
// halts the run and answers errStopped.
func (c *reconQuerier) QueryBatch(ctx context.Context, sqls []string) ([]*Rows, []error) {
	t := c.t
	t.mu.Lock()
	halted := t.halted
	t.mu.Unlock()
	if halted {
		errs := make([]error, len(sqls))
		for i := range errs {
			errs[i] = errStopped
		}
		return make([]*Rows, len(sqls)), errs
	}
	rows, errs := QueryAll(ctx, c.q, sqls)
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, err := range errs {
		if err != nil && Stopped(err) {
			if t.stop == nil {
				t.stop = err
			}
			t.halted = true
			rows[i], errs[i] = nil, errStopped
			continue
		}
		t.n++
	}
	return rows, errs
}

// halt stops every connection sharing c's tally before its next query: one
// worker's failure ends the others' searches.
func (c *reconQuerier) halt() {
	c.t.mu.Lock()
	c.t.halted = true
	c.t.mu.Unlock()
}

// sent is how many queries the connections sharing c's tally sent.
func (c *reconQuerier) sent() int {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	return c.t.n
}

// stopped is what ended the attack, nil while it runs.
func (c *reconQuerier) stopped() error {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	return c.t.stop
}

// setStop records err as what ended the attack, unless a stop came first.
func (c *reconQuerier) setStop(err error) {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	if c.t.stop == nil {
		c.t.stop = err
	}
}

// Unwrap is the Querier below the count.
func (c *reconQuerier) Unwrap() Querier { return c.q }

// Setup sends a session statement (SET epsilon) uncounted, as Logged does.
func (c *reconQuerier) Setup(ctx context.Context, sql string) (*Rows, error) {
	return sessionQuery(ctx, c.q, sql)
}
