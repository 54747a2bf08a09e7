package snapshot

import (
	"context"
	"fmt"
	"strings"

	"countwall/ir"
	"countwall/planner/plan"
)

// Fallback answers what the snapshot cannot: a table larger than its memory
// limit or one it cannot read (a view, an unreadable CREATE statement), a
// query it does not evaluate (math in WHERE, a column with a collation
// other than BINARY, contributor keys under bounds), and a query that meets
// a snapshot read for another privacy unit while a reload is under way.
type Fallback interface {
	Run(ctx context.Context, t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (*ir.Result, error)
}

// Store answers from the snapshots of a SQLite file, and through fallback
// where they cannot. It is safe for concurrent use.
type Store struct {
	snaps    *snapshots
	fallback Fallback
	opts     plan.StoreOptions
}

// Open keeps snapshots of the SQLite file at path, read through read-only
// connections of their own; fallback answers what they cannot.
func Open(path string, opts plan.StoreOptions, fallback Fallback) (*Store, error) {
	opts = opts.WithDefaults()
	snaps, err := openSnapshots(path, plan.ReadOnlyDSN(path, opts), opts)
	if err != nil {
		return nil, fmt.Errorf("planner: opening the protected database %q: %w", path, err)
	}
	return &Store{snaps: snaps, fallback: fallback, opts: opts}, nil
}

// Preload reads table t into memory now, as its first query would, and
// returns when it is ready (or left to the fallback, which is not an error:
// the reason goes to OnSnapshot). serve calls it before accepting analysts,
// so that no analyst's first query waits for the read.
func (s *Store) Preload(ctx context.Context, t *ir.Table) error {
	_, err := s.snaps.current(ctx, t.Name, t.PrivacyUnit)
	return err
}

// Close drops the snapshots; the fallback is its opener's to close.
func (s *Store) Close() error { return s.snaps.close() }

// Run answers like the SQL backend, from the table's snapshot when it is
// held and it evaluates the query, through the fallback otherwise. One
// deadline (the store's QueryTimeout) covers both.
func (s *Store) Run(ctx context.Context, t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (*ir.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	if res, ok, err := s.Answer(ctx, t, q, needs, secret); ok {
		return res, err
	}
	return s.fallback.Run(ctx, t, q, needs, secret)
}

// Answer answers from the snapshot alone; ok is false where Run hands the
// query to the fallback. Bounded counts differ from plain ones only where a
// unit has several rows: on a table declared keyed by its unit the
// snapshot's plain counts are the bounded ones, and on any other it bounds
// them per unit (answerBounded), so the path follows the config, never the
// rows.
func (s *Store) Answer(ctx context.Context, t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (res *ir.Result, ok bool, err error) {
	shape, bounds, rank, err := plan.Prepare(t, q, needs, secret)
	if err != nil {
		return nil, true, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	snap, err := s.snaps.current(ctx, t.Name, t.PrivacyUnit)
	if err != nil {
		return nil, true, plan.RunError(ctx, s.opts.QueryTimeout, t, err)
	}
	// The per-unit paths read each unit's rows as one run: a snapshot read
	// for another unit (a read begun under the config before a reload)
	// leaves the query to the fallback.
	if snap == nil || !snap.orderedFor(t.PrivacyUnit) {
		return nil, false, nil
	}
	answer := snap.answer
	switch {
	case q.HasSums():
		answer = func(t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte, shape *plan.Shape) (*ir.Result, bool, error) {
			return snap.answerSums(t, q, needs, secret, shape, bounds, rank)
		}
	case needs.Bound && !t.UnitKeyed:
		answer = func(t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte, shape *plan.Shape) (*ir.Result, bool, error) {
			return snap.answerBounded(t, q, needs, secret, shape, bounds, rank)
		}
	}
	if res, ok, err = answer(t, q, needs, secret, shape); !ok {
		return nil, false, nil
	}
	// The snapshot does not stop midway; an answer it finished after a
	// cancel or past the deadline is withheld, as SQLite's would be.
	if ctx.Err() != nil {
		return nil, true, plan.RunError(ctx, s.opts.QueryTimeout, t, ctx.Err())
	}
	if res != nil {
		res.Bounds, res.Path = bounds, ir.PathSnapshot
	}
	return res, true, err
}

// TalliesPerValue reports whether q, a COUNT whose WHERE is one leaf
// condition, is answered from the per-value tallies rather than a pass over
// the rows, so that tests can see the path taken.
func (s *Store) TalliesPerValue(ctx context.Context, t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (bool, error) {
	snap, err := s.snaps.current(ctx, t.Name, t.PrivacyUnit)
	if err != nil || snap == nil {
		return false, err
	}
	var unit *snapColumn
	if needs.Units || needs.Key || q.Agg == ir.CountDistinct {
		unit = snap.columns[strings.ToLower(t.PrivacyUnit)]
	}
	var keys []uint32
	if needs.Key {
		keys = snap.unitKeys(snap.columns[strings.ToLower(t.PrivacyUnit)], secret)
	}
	ev := newSnapEval(snap, t, needs)
	defer ev.release()
	_, ok := snap.oneConditionTally(ev, q, unit, keys, needs, t.UnitKeyed)
	return ok, nil
}

// Current is the snapshot of table as the file is now, read first when
// there is none or the file has changed; nil when the table cannot be held.
func (s *Store) Current(ctx context.Context, table string) (*Table, error) {
	return s.snaps.current(ctx, table, "")
}

// UniqueColumn reports whether no two rows of the snapshot share a value of
// the column.
func (snap *Table) UniqueColumn(name string) bool {
	c := snap.columns[strings.ToLower(name)]
	return c != nil && c.unique
}

// InUnitOrder reports whether the snapshot's rows are numbered in the order
// of the named unit column, each unit's rows one run.
func (snap *Table) InUnitOrder(unit string) bool {
	return snap.byUnit != nil && strings.EqualFold(snap.byUnit.name, unit)
}
