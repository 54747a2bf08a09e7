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

// admit decides e against raw, a balance with the pure and zCDP spending
// apart (readRaw's, or a reservation's answeredRaw), and returns the
// balance after it, or the refusal. A pure charge must fit what the caps
// leave once the rho spent is converted; a zCDP charge must keep the sum of
// rho with it, converted, and the pure charges within the epsilon cap, and
// its pure delta (a partition selection's) within the delta cap. fold is
// foldRho, or a reservation's remembered one.
func admit(raw Balance, e Entry, fold func(Balance) Balance) (Balance, error) {
	before := fold(raw)
	if e.Rho == 0 {
		if e.Kind != ir.AccountingNone {
			if !fits(before.EpsilonSpent, e.Epsilon, before.EpsilonCap) {
				return Balance{}, exhausted(e, "epsilon", before.EpsilonSpent, before.EpsilonCap, e.Epsilon)
			}
			if !fits(before.DeltaSpent, e.Delta, before.DeltaCap) {
				return Balance{}, exhausted(e, "delta", before.DeltaSpent, before.DeltaCap, e.Delta)
			}
		}
		before.EpsilonSpent += e.Epsilon
		before.DeltaSpent += e.Delta
		return before, nil
	}
	after := fold(raw.plus(e, 1))
	cost := after.EpsilonSpent - before.EpsilonSpent
	if !fits(before.EpsilonSpent, cost, after.EpsilonCap) {
		return Balance{}, exhausted(e, "epsilon", before.EpsilonSpent, before.EpsilonCap, cost)
	}
	if e.Delta > 0 && !fits(before.DeltaSpent-before.RhoDelta, e.Delta, after.DeltaCap) {
		return Balance{}, exhausted(e, "delta", before.DeltaSpent, before.DeltaCap, e.Delta)
	}
	return after, nil
}

// plus is the raw balance b with k charges of e more.
func (b Balance) plus(e Entry, k float64) Balance {
	b.EpsilonSpent += k * e.Epsilon
	b.DeltaSpent += k * e.Delta
	b.RhoSpent += k * e.Rho
	return b
}

// rhoMultiple is how many charges of e (at most most, at least the one
// admit let through) a reservation holds: the largest number whose sum,
// converted together with raw's spending, stays within the caps with no
// rounding tolerance, so that a reservation never holds more than what is
// left. The conversion grows with rho, so a bisection finds it.
func rhoMultiple(raw Balance, e Entry, most int) int {
	within := func(k int) bool {
		b := raw.plus(e, float64(k))
		f := foldRho(b)
		return f.EpsilonSpent <= f.EpsilonCap && (e.Delta == 0 || b.DeltaSpent <= b.DeltaCap)
	}
	if within(most) {
		return most
	}
	lo, hi := 1, most // lo is admitted, hi is not within
	for hi-lo > 1 {
		if mid := (lo + hi) / 2; within(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
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
