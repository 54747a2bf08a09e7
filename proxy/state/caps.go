package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"countwall/ir"
)

// Held caps. A config reload (or a restart with an edited config) must
// never raise an analyst's budget: the ledger remembers, per analyst and
// kind, the lowest cap ever offered for her, and Hold returns that. A lower
// cap takes effect at once; a higher one is ignored. The only way up is
// Grant, which adds to the held cap and is recorded.

const capsSchema = `
CREATE TABLE IF NOT EXISTS ledger_caps (
	analyst TEXT NOT NULL,
	kind    TEXT NOT NULL,
	epsilon REAL,           -- NULL: no limit
	delta   REAL,
	at      TEXT NOT NULL,  -- when the cap was last lowered
	PRIMARY KEY (analyst, kind)
)`

// Hold records offered as a cap of analyst's kind if it is lower than the
// one held (field by field), and returns the held caps: the lowest offered
// since the analyst was first seen.
func (l *Ledger) Hold(ctx context.Context, analyst string, kind ir.Accounting, offered Caps) (Caps, error) {
	switch {
	case analyst == "":
		return Caps{}, errors.New("ledger: holding caps without an analyst")
	case !validKind(kind):
		return Caps{}, fmt.Errorf("ledger: unknown accounting kind %q", kind)
	case math.IsNaN(offered.Epsilon) || math.IsNaN(offered.Delta) || offered.Epsilon < 0 || offered.Delta < 0:
		return Caps{}, fmt.Errorf("ledger: caps epsilon %g, delta %g must be >= 0 (NoCap for no limit)", offered.Epsilon, offered.Delta)
	}
	if err := l.capsTable(ctx); err != nil {
		return Caps{}, err
	}
	// One statement: two processes lowering at once both win, whichever
	// order they run in.
	var eps, delta any
	if !math.IsInf(offered.Epsilon, 1) {
		eps = offered.Epsilon
	}
	if !math.IsInf(offered.Delta, 1) {
		delta = offered.Delta
	}
	var heldEps, heldDelta *float64
	err := l.db.QueryRowContext(ctx, `INSERT INTO ledger_caps AS c (analyst, kind, epsilon, delta, at) VALUES (?1, ?2, ?3, ?4, ?5)
ON CONFLICT (analyst, kind) DO UPDATE SET
	epsilon = CASE WHEN excluded.epsilon IS NULL THEN c.epsilon WHEN c.epsilon IS NULL THEN excluded.epsilon ELSE min(c.epsilon, excluded.epsilon) END,
	delta   = CASE WHEN excluded.delta IS NULL THEN c.delta WHEN c.delta IS NULL THEN excluded.delta ELSE min(c.delta, excluded.delta) END,
	at      = CASE WHEN (excluded.epsilon < c.epsilon OR (c.epsilon IS NULL AND excluded.epsilon IS NOT NULL))
	                 OR (excluded.delta < c.delta OR (c.delta IS NULL AND excluded.delta IS NOT NULL)) THEN excluded.at ELSE c.at END
RETURNING epsilon, delta`, analyst, string(kind), eps, delta, l.now().UTC().Format(time.RFC3339Nano)).Scan(&heldEps, &heldDelta)
	if err != nil {
		return Caps{}, fmt.Errorf("ledger: holding caps: %w", err)
	}
	held := Unlimited()
	if heldEps != nil {
		held.Epsilon = *heldEps
	}
	if heldDelta != nil {
		held.Delta = *heldDelta
	}
	return held, nil
}

// capsTable creates the held caps' table once per Ledger; it is created
// here rather than in Open so that the ledger's schema stays as it was for
// callers that never hold caps.
func (l *Ledger) capsTable(ctx context.Context) error {
	l.capsOnce.Do(func() {
		if _, err := l.db.ExecContext(context.WithoutCancel(ctx), capsSchema); err != nil {
			l.capsErr = fmt.Errorf("ledger: creating the caps table: %w", err)
		}
	})
	return l.capsErr
}

// heldCaps returns the caps held for analyst's kind without offering any,
// and false when none are held (or the caps table does not exist yet): a
// reader such as `countwall budget list` must not write the ledger.
func (l *Ledger) heldCaps(ctx context.Context, analyst string, kind ir.Accounting) (Caps, bool, error) {
	exists, err := tableExists(ctx, l.db, "ledger_caps")
	if err != nil {
		return Caps{}, false, fmt.Errorf("ledger: reading held caps: %w", err)
	}
	if !exists {
		return Caps{}, false, nil
	}
	var eps, delta sql.NullFloat64
	err = l.db.QueryRowContext(ctx, `SELECT epsilon, delta FROM ledger_caps WHERE analyst = ? AND kind = ?`, analyst, string(kind)).Scan(&eps, &delta)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Caps{}, false, nil
	case err != nil:
		return Caps{}, false, fmt.Errorf("ledger: reading held caps: %w", err)
	}
	held := Unlimited()
	if eps.Valid {
		held.Epsilon = eps.Float64
	}
	if delta.Valid {
		held.Delta = delta.Float64
	}
	return held, true, nil
}

// lower returns c with each field no higher than o's.
func (c Caps) lower(o Caps) Caps {
	return Caps{Epsilon: math.Min(c.Epsilon, o.Epsilon), Delta: math.Min(c.Delta, o.Delta)}
}
