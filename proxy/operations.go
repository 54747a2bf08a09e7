package proxy

import (
	"context"
	"sync"
	"time"

	"countwall/pgerror"
	"countwall/planner/plan"
	"countwall/proxy/metrics"
	"countwall/proxy/state"
	"countwall/proxy/state/release"
)

// StatementObserver is told of every statement's kind, SQLSTATE ("" when it
// was answered) and duration: what operations metrics count. It never sees
// a statement's text or its answer.
type StatementObserver interface {
	Statement(kind release.Kind, code pgerror.Code, took time.Duration)
}

// operations is what the engine keeps for monitoring.
type operations struct {
	observer  StatementObserver
	snapshots *snapshotStates
}

// SetStatementObserver makes o see every statement from now on. It is set
// once, before serving.
func (e *Engine) SetStatementObserver(o StatementObserver) { e.ops.observer = o }

// observe reports a finished statement to the observer, if any.
func (e *Engine) observe(kind release.Kind, err error, took time.Duration) {
	if e.ops.observer == nil {
		return
	}
	var code pgerror.Code
	if err != nil {
		code = pgerror.Public(err).Code
	}
	e.ops.observer.Statement(kind, code, took)
}

// OpenSessions is the number of sessions open.
func (e *Engine) OpenSessions() int {
	e.sessionsMu.Lock()
	defer e.sessionsMu.Unlock()
	return len(e.sessions)
}

// BudgetSpent is what each configured analyst has spent of each accounting
// kind, as SHOW budget reports it.
func (e *Engine) BudgetSpent(ctx context.Context) ([]metrics.Spent, error) {
	var out []metrics.Spent
	for _, name := range sortedNames(e.Config().Analysts) {
		bals, err := e.budget.Balances(ctx, name)
		if err != nil {
			return nil, err
		}
		for _, b := range bals {
			// Rounded (state.Figure): 6, not 5.999999999999995.
			out = append(out, metrics.Spent{Analyst: name, Kind: string(b.Kind),
				Epsilon: state.Figure(b.EpsilonSpent), Delta: state.Figure(b.DeltaSpent), Rho: state.Figure(b.RhoSpent)})
		}
	}
	return out, nil
}

// SnapshotStates is each configured table's snapshot state: none (not read
// yet), loading, memory or sqlite (left to SQLite).
func (e *Engine) SnapshotStates() map[string]string {
	out := map[string]string{}
	for name := range e.live.Load().catalog.Tables {
		out[name] = "none"
	}
	if e.ops.snapshots != nil {
		e.ops.snapshots.mu.Lock()
		for table, state := range e.ops.snapshots.state {
			out[table] = state
		}
		e.ops.snapshots.mu.Unlock()
	}
	return out
}

// snapshotStates keeps the last state the store reported for each table.
type snapshotStates struct {
	mu    sync.Mutex
	state map[string]string
}

// wrap records each report before passing it on.
func (s *snapshotStates) wrap(next func(plan.SnapshotInfo)) func(plan.SnapshotInfo) {
	return func(i plan.SnapshotInfo) {
		state := "memory"
		switch {
		case i.Err != nil:
			state = "sqlite"
		case i.InProgress:
			state = "loading"
		}
		s.mu.Lock()
		if s.state == nil {
			s.state = map[string]string{}
		}
		s.state[i.Table] = state
		s.mu.Unlock()
		next(i)
	}
}
