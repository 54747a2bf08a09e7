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

// The ledger's accounts as the owner and SHOW budget see them: balances,
// the list of every analyst, grants, resets, and settling at Close.

// Balances returns the analyst's balance in every accounting kind (zeros
// included), against caps plus grants.
func (l *Ledger) Balances(ctx context.Context, analyst string, caps Caps) ([]Balance, error) {
	st := l.analyst(analyst)
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]Balance, 0, len(Kinds))
	for _, k := range Kinds {
		b, err := l.balanceLocked(ctx, st, analyst, k, caps)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// BalanceOf returns the analyst's balance in one kind against its caps
// plus grants: a zCDP balance is converted to epsilon at these caps' delta.
func (l *Ledger) BalanceOf(ctx context.Context, analyst string, kind ir.Accounting, caps Caps) (Balance, error) {
	st := l.analyst(analyst)
	st.mu.Lock()
	defer st.mu.Unlock()
	return l.balanceLocked(ctx, st, analyst, kind, caps)
}

func (l *Ledger) balanceLocked(ctx context.Context, st *analystState, analyst string, kind ir.Accounting, caps Caps) (Balance, error) {
	raw, err := l.readRaw(ctx, l.db, analyst, kind, caps)
	if err != nil {
		return Balance{}, err
	}
	c := st.chunks[kind]
	if c == nil {
		return foldRho(raw), nil
	}
	// What this process has reserved and not used is not spent yet.
	raw.EpsilonSpent -= c.remainingEps
	raw.DeltaSpent -= c.remainingDelta
	raw.RhoSpent -= c.remainingRho
	return c.withReserved(foldRho(raw)), nil
}

// List returns every analyst's balance in every kind with spending or
// grants, sorted by analyst and kind. capsFor gives an analyst's caps as a
// config sets them, lowered here to any lower caps the ledger holds; with a
// nil capsFor the caps are unknown (NaN).
func (l *Ledger) List(ctx context.Context, capsFor func(analyst string) Caps) ([]Balance, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT analyst, kind FROM ledger_spent
UNION SELECT analyst, kind FROM ledger_grants ORDER BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("ledger: listing: %w", err)
	}
	type key struct{ analyst, kind string }
	var keys []key
	for rows.Next() {
		var k key
		if err := rows.Scan(&k.analyst, &k.kind); err != nil {
			rows.Close()
			return nil, fmt.Errorf("ledger: listing: %w", err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: listing: %w", err)
	}
	out := make([]Balance, 0, len(keys))
	for _, k := range keys {
		kind := ir.Accounting(k.kind)
		caps := Caps{Epsilon: math.NaN(), Delta: math.NaN()}
		if capsFor != nil {
			caps = capsFor(k.analyst)
			// A cap a reload lowered stays in force, whatever the config says now.
			held, ok, err := l.heldCaps(ctx, k.analyst, kind)
			if err != nil {
				return nil, err
			}
			if ok {
				caps = caps.lower(held)
			}
		}
		bs, err := l.Balances(ctx, k.analyst, caps)
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			if b.Kind == kind {
				out = append(out, b)
			}
		}
	}
	return out, nil
}

// Grant gives an analyst extra budget of one kind, on top of the caps.
func (l *Ledger) Grant(ctx context.Context, analyst string, kind ir.Accounting, epsilon, delta float64) error {
	switch {
	case analyst == "":
		return errors.New("grant: no analyst named")
	case !validKind(kind):
		return fmt.Errorf("grant: unknown accounting kind %q (known: dp, idp, bdp)", kind)
	case !validAmount(epsilon) || !validAmount(delta) || epsilon+delta == 0:
		return fmt.Errorf("grant: epsilon %g and delta %g must be finite, non-negative and not both 0", epsilon, delta)
	}
	st := l.analyst(analyst)
	st.mu.Lock()
	defer st.mu.Unlock()
	err := l.immediate(ctx, func(tx *sql.Conn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO ledger_grants (at, analyst, kind, epsilon, delta) VALUES (?, ?, ?, ?, ?)`,
			l.now().UTC().Format(time.RFC3339Nano), analyst, string(kind), epsilon, delta)
		return err
	})
	if err != nil {
		return fmt.Errorf("grant: %w", err)
	}
	// An open reservation caches the grants: settle it so the next charge
	// sees the new grant.
	return l.settleAnalyst(ctx, st, analyst)
}

// settleAnalyst settles the analyst's open reservations (st.mu held).
func (l *Ledger) settleAnalyst(ctx context.Context, st *analystState, analyst string) error {
	if len(st.chunks) == 0 {
		return nil
	}
	err := l.immediate(ctx, func(tx *sql.Conn) error {
		for kind, c := range st.chunks {
			if err := settle(ctx, tx, analyst, kind, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	clear(st.chunks)
	return nil
}

// Reset starts an analyst afresh: spending, reservations and grants are
// cleared in every kind. The answered queries stay in the ledger's history
// and the reset itself is recorded.
func (l *Ledger) Reset(ctx context.Context, analyst string) error {
	if analyst == "" {
		return errors.New("reset: no analyst named")
	}
	st := l.analyst(analyst)
	st.mu.Lock()
	defer st.mu.Unlock()
	err := l.immediate(ctx, func(tx *sql.Conn) error {
		for kind, c := range st.chunks {
			if err := writeHistory(ctx, tx, analyst, kind, c.runs); err != nil {
				return err
			}
		}
		for _, stmt := range []string{
			`DELETE FROM ledger_spent WHERE analyst = ?`,
			`DELETE FROM ledger_reservations WHERE analyst = ?`,
			`DELETE FROM ledger_grants WHERE analyst = ?`,
		} {
			if _, err := tx.ExecContext(ctx, stmt, analyst); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO ledger_resets (at, analyst) VALUES (?, ?)`,
			l.now().UTC().Format(time.RFC3339Nano), analyst)
		return err
	})
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	clear(st.chunks)
	return nil
}

// Close settles every open reservation, giving back what was not used. It
// does not close the database.
func (l *Ledger) Close(ctx context.Context) error {
	l.mu.Lock()
	names := make([]string, 0, len(l.analysts))
	for n := range l.analysts {
		names = append(names, n)
	}
	l.mu.Unlock()
	var errs []error
	for _, n := range names {
		st := l.analyst(n)
		st.mu.Lock()
		errs = append(errs, l.settleAnalyst(ctx, st, n))
		st.mu.Unlock()
	}
	return errors.Join(errs...)
}
