package attacks

import (
	"context"
	"slices"
	"sync"
)

// DefaultPipeline is --pipeline's default: 16 statements in flight on a
// connection take a round trip and a commit of the audit log where one
// statement took each, and their answers fit the socket's buffers many
// times over.
const DefaultPipeline = 16

// lockstep runs several searches over one connection with their statements
// in flight together: each search asks its next statement through its own
// slot (lockstep.slot) and waits; once every search still running has
// asked, the statements go out as one batch (QueryAll), in the order of the
// slots, and each search gets its answer. A search's statements still
// depend on its own earlier answers, never on another's, so each search
// asks exactly what it would alone; only the waiting is shared.
//
// Every search goroutine calls join before its first statement and leave
// after its last: a batch waits for the searches that are running, and a
// search that ends lets the others' batch go.
type lockstep struct {
	q Querier // the connection

	mu      sync.Mutex
	running int
	waiting []*stepCall
}

// stepCall is one search's statement waiting for its batch.
type stepCall struct {
	ctx  context.Context
	slot int
	sql  string
	rows *Rows
	err  error
	done chan struct{}
}

func newLockstep(q Querier) *lockstep { return &lockstep{q: q} }

func (l *lockstep) join() {
	l.mu.Lock()
	l.running++
	l.mu.Unlock()
}

func (l *lockstep) leave() {
	l.mu.Lock()
	l.running--
	batch := l.full()
	l.mu.Unlock()
	l.send(batch)
}

// full takes the waiting statements once every running search has asked;
// l.mu is held.
func (l *lockstep) full() []*stepCall {
	if len(l.waiting) == 0 || len(l.waiting) < l.running {
		return nil
	}
	batch := l.waiting
	l.waiting = nil
	slices.SortFunc(batch, func(a, b *stepCall) int { return a.slot - b.slot })
	return batch
}

// send sends a batch and hands each search its answer.
func (l *lockstep) send(batch []*stepCall) {
	if len(batch) == 0 {
		return
	}
	sqls := make([]string, len(batch))
	for i, c := range batch {
		sqls[i] = c.sql
	}
	rows, errs := QueryAll(batch[0].ctx, l.q, sqls)
	for i, c := range batch {
		c.rows, c.err = rows[i], errs[i]
		close(c.done)
	}
}

// slot is the Querier of the search in slot i.
func (l *lockstep) slot(i int) Querier { return stepQuerier{l: l, slot: i} }

// stepQuerier is one search's way to its lockstep's connection.
type stepQuerier struct {
	l    *lockstep
	slot int
}

func (s stepQuerier) Query(ctx context.Context, sql string) (*Rows, error) {
	c := &stepCall{ctx: ctx, slot: s.slot, sql: sql, done: make(chan struct{})}
	l := s.l
	l.mu.Lock()
	l.waiting = append(l.waiting, c)
	batch := l.full()
	l.mu.Unlock()
	l.send(batch)
	<-c.done
	return c.rows, c.err
}

// inBatches sends n independent statements, sql(0) to sql(n-1), through q
// with up to depth in flight at once (1: one after another), and hands
// each answer to each, in order, until each returns false. The first
// statement goes alone: a refusal of the first (the policy, the budget)
// usually ends an attack, and should cost one statement, not a batch.
// Statements of a batch past the one each stopped at were sent all the
// same: a wrapper counting what is sent (Logged) counts them.
func inBatches(ctx context.Context, q Querier, depth, n int, sql func(i int) string, each func(i int, rows *Rows, err error) bool) {
	depth = max(depth, 1)
	size := 1
	for start := 0; start < n; {
		end := min(start+size, n)
		sqls := make([]string, 0, end-start)
		for i := start; i < end; i++ {
			sqls = append(sqls, sql(i))
		}
		var rows []*Rows
		var errs []error
		if len(sqls) == 1 {
			r, err := q.Query(ctx, sqls[0])
			rows, errs = []*Rows{r}, []error{err}
		} else {
			rows, errs = QueryAll(ctx, q, sqls)
		}
		for j := range sqls {
			if !each(start+j, rows[j], errs[j]) {
				return
			}
		}
		start, size = end, depth
	}
}
