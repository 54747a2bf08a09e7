package state

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"countwall/ir"
)

// foldRho turns a raw balance (pure and zCDP spending apart) into one held
// to (epsilon, delta) caps. rho-zCDP implies (ZCDPEpsilon(rho, d), d)-DP for
// every d > 0 (Bun and Steinke 2016, Prop. 1.3), and that composes with the
// pure (epsilon, delta) charges by adding. d is all the delta the pure
// charges leave of the cap, since nothing else will use it. When the caps
// are unknown (List without caps) the balance is left raw: EpsilonSpent is
// the pure spending and RhoSpent stands apart.
func foldRho(b Balance) Balance {
	if b.RhoSpent <= 0 || math.IsNaN(b.DeltaCap) {
		return b
	}
	d := b.DeltaCap - b.DeltaSpent
	if d > ir.MaxDelta { // an unlimited delta cap: convert at the largest delta any query may use
		d = ir.MaxDelta
	}
	b.RhoDelta = d
	b.EpsilonSpent += ir.ZCDPEpsilon(b.RhoSpent, d)
	b.DeltaSpent += d
	return b
}

// chargeRho records a zCDP charge: the kind's open reservation is settled
// first (it was sized against the spending before this rho), then the sum of
// rho with this charge, converted, must fit the epsilon cap.
func (l *Ledger) chargeRho(ctx context.Context, st *analystState, e Entry, caps Caps) (Balance, error) {
	old := st.chunks[e.Kind]
	var bal Balance
	var refusal error
	err := l.immediate(ctx, func(tx *sql.Conn) error {
		if err := settle(ctx, tx, e.Analyst, e.Kind, old); err != nil {
			return err
		}
		raw, err := l.readRaw(ctx, tx, e.Analyst, e.Kind, caps)
		if err != nil {
			return err
		}
		before := foldRho(raw)
		raw.EpsilonSpent += e.Epsilon
		raw.DeltaSpent += e.Delta
		raw.RhoSpent += e.Rho
		after := foldRho(raw)
		if !fits(before.EpsilonSpent, after.EpsilonSpent-before.EpsilonSpent, after.EpsilonCap) {
			refusal = exhausted(e, "epsilon", before.EpsilonSpent, before.EpsilonCap, after.EpsilonSpent-before.EpsilonSpent)
			return nil // commit the settlement, charge nothing
		}
		if e.Delta > 0 && !fits(before.DeltaSpent-before.RhoDelta, e.Delta, after.DeltaCap) {
			refusal = exhausted(e, "delta", before.DeltaSpent, before.DeltaCap, e.Delta)
			return nil
		}
		if err := writeHistory(ctx, tx, e.Analyst, e.Kind, appendCharge(nil, l.now(), e)); err != nil {
			return err
		}
		if err := addSpent(ctx, tx, e.Analyst, e.Kind, e.Epsilon, e.Delta); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE ledger_spent SET rho = rho + ? WHERE analyst = ? AND kind = ?`,
			e.Rho, e.Analyst, string(e.Kind)); err != nil {
			return fmt.Errorf("ledger: updating spent rho: %w", err)
		}
		bal = after
		return nil
	})
	if err != nil {
		return Balance{}, err
	}
	delete(st.chunks, e.Kind) // settled
	if refusal != nil {
		return Balance{}, refusal
	}
	return bal, nil
}

// addRhoColumn adds the rho column to a table written before zCDP charges
// existed; existing rows hold no rho.
func addRhoColumn(ctx context.Context, db *sql.DB, table string) error {
	has, err := columnExists(ctx, db, table, "rho")
	if err != nil {
		return fmt.Errorf("ledger: reading the columns of %s: %w", table, err)
	}
	if has {
		return nil
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE `+table+` ADD COLUMN rho REAL NOT NULL DEFAULT 0`); err != nil {
		return fmt.Errorf("ledger: adding the rho column to %s: %w", table, err)
	}
	return nil
}
