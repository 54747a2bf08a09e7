package state

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"countwall/ir"
)

// capsTable is a CapsSource as a config would be: listed analysts' own
// caps, else the default.
type capsTable struct {
	def      Caps
	analysts map[string]Caps
}

func (c capsTable) AnalystCaps(analyst string) (float64, float64, bool) {
	if a, ok := c.analysts[analyst]; ok {
		return a.Epsilon, a.Delta, true
	}
	return c.def.Epsilon, c.def.Delta, false
}

func (c capsTable) AnalystNames() []string {
	names := make([]string, 0, len(c.analysts))
	for n := range c.analysts {
		names = append(names, n)
	}
	return names
}

// TestBudgetHoldsCapsAcrossConfigure: a reload may lower an analyst's cap
// but never raise it, whether she is still listed, listed higher or gone;
// an analyst never listed follows the default both ways until she has
// been held.
func TestBudgetHoldsCapsAcrossConfigure(t *testing.T) {
	ctx := context.Background()
	l := openLedger(t, filepath.Join(t.TempDir(), "state.db"), 1)
	b := NewBudget(l, capsTable{def: Caps{Epsilon: 1, Delta: 1e-5}, analysts: map[string]Caps{
		"alice": {Epsilon: 0.5, Delta: 1e-6}, "bob": {Epsilon: 0.4, Delta: 1e-6}, "carol": {Epsilon: 0.3, Delta: 1e-6},
	}})
	// alice is raised, bob removed (the default is higher), carol lowered.
	if err := b.Configure(ctx, capsTable{def: Caps{Epsilon: 2, Delta: 1e-5}, analysts: map[string]Caps{
		"alice": {Epsilon: 5, Delta: 1e-6}, "carol": {Epsilon: 0.2, Delta: 1e-7},
	}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		analyst    string
		eps, delta float64
	}{
		{"alice", 0.5, 1e-6}, // raising is ignored
		{"bob", 0.4, 1e-6},   // leaving the list does not take the higher default
		{"carol", 0.2, 1e-7}, // lowering takes effect
		{"dave", 2, 1e-5},    // never listed: the default in force
	} {
		bals, err := b.Balances(ctx, tc.analyst)
		if err != nil {
			t.Fatal(err)
		}
		if len(bals) != len(Kinds) {
			t.Fatalf("%s: %d balances, want one per kind (%d)", tc.analyst, len(bals), len(Kinds))
		}
		for _, bal := range bals {
			if bal.EpsilonCap != tc.eps || bal.DeltaCap != tc.delta {
				t.Errorf("%s %s: caps epsilon %g delta %g, want %g and %g", tc.analyst, bal.Kind, bal.EpsilonCap, bal.DeltaCap, tc.eps, tc.delta)
			}
		}
	}
	// A charge is held to the caps in force: alice's 0.5, not the 5 offered.
	charge := func(eps float64) error {
		_, err := b.Charge(ctx, EntryOf("alice", "laplace", "fp", ir.Charge{Kind: dp, Epsilon: eps}))
		return err
	}
	if err := charge(0.5); err != nil {
		t.Fatalf("charge within the held cap: %v", err)
	}
	if err := charge(0.1); !isExhausted(err) {
		t.Fatalf("charge past the held cap: %v, want budget exhausted", err)
	}
	// A grant adds to the held cap.
	if err := l.Grant(ctx, "alice", dp, 0.25, 0); err != nil {
		t.Fatal(err)
	}
	bal, err := b.Charge(ctx, EntryOf("alice", "laplace", "fp", ir.Charge{Kind: dp, Epsilon: 0.1}))
	if err != nil {
		t.Fatalf("charge within the grant: %v", err)
	}
	if math.Abs(bal.EpsilonRemaining()-0.15) > 1e-12 || bal.EpsilonCap != 0.75 {
		t.Errorf("after the grant: remaining %g of %g, want 0.15 of 0.75", bal.EpsilonRemaining(), bal.EpsilonCap)
	}
}

// TestNotice: what an answer cost and what remains, per kind of charge.
func TestNotice(t *testing.T) {
	for _, tc := range []struct {
		name string
		bal  Balance
		c    ir.Charge
		want string
	}{
		// A zCDP charge says rho, the converted spending and what remains,
		// without a delta line (the delta cap goes to the conversion).
		{"rho", Balance{Kind: dp, EpsilonSpent: 0.25, EpsilonCap: 3, DeltaSpent: 1e-5, DeltaCap: 1e-5, RhoSpent: 0.001},
			ir.Charge{Kind: dp, Rho: 0.0005},
			"charged rho 0.0005 (dp, zCDP: rho spent 0.001 is epsilon 0.25 at delta 1e-05); remaining epsilon 2.75 of 3"},
		{"pure epsilon", Balance{Kind: dp, EpsilonSpent: 0.25, EpsilonCap: 1, DeltaCap: 1e-5},
			ir.Charge{Kind: dp, Epsilon: 0.25},
			"charged epsilon 0.25 (dp); remaining epsilon 0.75 of 1"},
		{"with delta", Balance{Kind: dp, EpsilonSpent: 0.5, EpsilonCap: 1, DeltaSpent: 1e-5, DeltaCap: 1e-5},
			ir.Charge{Kind: dp, Epsilon: 0.5, Delta: 1e-6},
			"charged epsilon 0.5 (dp); remaining epsilon 0.5 of 1; charged delta 1e-06, remaining delta 0 of 1e-05"},
		// Fourteen charges of 0.1 sum to 1.4000000000000004 in float64:
		// what remains reads 0.6, not 0.5999999999999996.
		{"summed shares", Balance{Kind: dp, EpsilonSpent: 1.4000000000000004, EpsilonCap: 2, DeltaSpent: 3.0000000000000004e-06, DeltaCap: 1e-5},
			ir.Charge{Kind: dp, Epsilon: 0.1, Delta: 1e-6},
			"charged epsilon 0.1 (dp); remaining epsilon 0.6 of 2; charged delta 1e-06, remaining delta 7e-06 of 1e-05"},
		// Ten charges of 0.1 sum to 0.9999999999999999: nothing remains.
		{"the cap met", Balance{Kind: dp, EpsilonSpent: 0.9999999999999999, EpsilonCap: 1, DeltaCap: 1e-5},
			ir.Charge{Kind: dp, Epsilon: 0.1},
			"charged epsilon 0.1 (dp); remaining epsilon 0 of 1"},
	} {
		if got := tc.bal.Notice(tc.c); got != tc.want {
			t.Errorf("%s: notice %q, want %q", tc.name, got, tc.want)
		}
	}
}
