package state

import (
	"math"

	"countwall/ir"
)

// Preview is the balance b (as Balances shows it) would show once charge c
// is taken, or the refusal the ledger would give it: what EXPLAIN reports,
// charging nothing. It applies Charge's own rules: a pure charge is held to
// the caps as the balance stands; a zCDP charge adds its rho, converted at
// the delta the pure charges leave (foldRho), and its pure part to them.
func Preview(analyst string, b Balance, c ir.Charge) (Balance, error) {
	e := Entry{Analyst: analyst, Kind: c.Kind, Epsilon: c.Epsilon, Delta: c.Delta, Rho: c.Rho}
	if c.Kind == ir.AccountingNone {
		return b, nil
	}
	if c.Rho <= 0 {
		if !fits(b.EpsilonSpent, c.Epsilon, b.EpsilonCap) {
			return Balance{}, exhausted(e, "epsilon", b.EpsilonSpent, b.EpsilonCap, c.Epsilon)
		}
		if !fits(b.DeltaSpent, c.Delta, b.DeltaCap) {
			return Balance{}, exhausted(e, "delta", b.DeltaSpent, b.DeltaCap, c.Delta)
		}
		b.EpsilonSpent += c.Epsilon
		b.DeltaSpent += c.Delta
		return b, nil
	}
	raw := b
	if b.RhoSpent > 0 && !math.IsNaN(b.DeltaCap) {
		raw.EpsilonSpent -= ir.ZCDPEpsilon(b.RhoSpent, b.RhoDelta)
		raw.DeltaSpent -= b.RhoDelta
		raw.RhoDelta = 0
	}
	pureDelta := raw.DeltaSpent
	raw.EpsilonSpent += c.Epsilon
	raw.DeltaSpent += c.Delta
	raw.RhoSpent += c.Rho
	after := foldRho(raw)
	if cost := after.EpsilonSpent - b.EpsilonSpent; !fits(b.EpsilonSpent, cost, after.EpsilonCap) {
		return Balance{}, exhausted(e, "epsilon", b.EpsilonSpent, b.EpsilonCap, cost)
	}
	if !fits(pureDelta, c.Delta, after.DeltaCap) {
		return Balance{}, exhausted(e, "delta", b.DeltaSpent, b.DeltaCap, c.Delta)
	}
	return after, nil
}
