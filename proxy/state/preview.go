package state

import (
	"math"

	"countwall/ir"
)

// Preview is the balance b (as Balances shows it) would show once charge c
// is taken, or the refusal the ledger would give it: what EXPLAIN reports,
// charging nothing. It applies Charge's own rules (admit): a pure charge is
// held to the caps as the balance stands; a zCDP charge adds its rho,
// converted at the delta the pure charges leave (foldRho), and its pure
// part to them.
func Preview(analyst string, b Balance, c ir.Charge) (Balance, error) {
	if c.Kind == ir.AccountingNone {
		return b, nil
	}
	raw := b // the pure and zCDP spending apart, as admit takes them
	if b.RhoSpent > 0 && !math.IsNaN(b.DeltaCap) {
		raw.EpsilonSpent -= ir.ZCDPEpsilon(b.RhoSpent, b.RhoDelta)
		raw.DeltaSpent -= b.RhoDelta
		raw.RhoDelta = 0
	}
	return admit(raw, Entry{Analyst: analyst, Kind: c.Kind, Epsilon: c.Epsilon, Delta: c.Delta, Rho: c.Rho}, foldRho)
}
