package state

import (
	"context"
	"testing"

	"countwall/ir"
)

// TestHoldNeverRaisesACap: the held cap is the lowest offered so far, field
// by field, per analyst and kind, and survives reopening the ledger.
func TestHoldNeverRaisesACap(t *testing.T) {
	ctx := context.Background()
	path := newStatePath(t)
	l := openLedger(t, path, 1)
	idp := ir.AccountingIDP
	steps := []struct {
		analyst string
		kind    ir.Accounting
		offered Caps
		want    Caps
	}{
		{"alice", dp, Caps{Epsilon: 0.05, Delta: 1e-5}, Caps{Epsilon: 0.05, Delta: 1e-5}},
		{"alice", dp, Caps{Epsilon: 1, Delta: 1e-5}, Caps{Epsilon: 0.05, Delta: 1e-5}},   // higher: ignored
		{"alice", dp, Caps{Epsilon: 0.5, Delta: 1e-7}, Caps{Epsilon: 0.05, Delta: 1e-7}}, // delta lowered alone
		{"alice", dp, Caps{Epsilon: 0.01, Delta: 1}, Caps{Epsilon: 0.01, Delta: 1e-7}},   // epsilon lowered alone
		{"alice", idp, Caps{Epsilon: 2, Delta: 0}, Caps{Epsilon: 2, Delta: 0}},           // another kind: its own
		{"bob", dp, Unlimited(), Unlimited()},                                            // no limit held as none
		{"bob", dp, Caps{Epsilon: 3, Delta: NoCap}, Caps{Epsilon: 3, Delta: NoCap}},      // a limit lowers "none"
		{"bob", dp, Unlimited(), Caps{Epsilon: 3, Delta: NoCap}},                         // "none" does not raise
		{"alice", dp, Caps{Epsilon: 0, Delta: 0}, Caps{Epsilon: 0, Delta: 0}},            // down to nothing
		{"alice", dp, Caps{Epsilon: 0.05, Delta: 1e-5}, Caps{Epsilon: 0, Delta: 0}},      // and it stays
	}
	for i, st := range steps {
		got, err := l.Hold(ctx, st.analyst, st.kind, st.offered)
		if err != nil {
			t.Fatal(err)
		}
		if got != st.want {
			t.Errorf("step %d: Hold(%s, %s, %+v) = %+v, want %+v", i, st.analyst, st.kind, st.offered, got, st.want)
		}
	}
	again := openLedger(t, path, 1)
	if got, err := again.Hold(ctx, "alice", idp, Caps{Epsilon: 9, Delta: 9}); err != nil || got != (Caps{Epsilon: 2, Delta: 0}) {
		t.Errorf("after reopening: %+v, %v", got, err)
	}
	for _, bad := range []struct {
		analyst string
		kind    ir.Accounting
		caps    Caps
	}{{"", dp, Unlimited()}, {"alice", "nope", Unlimited()}, {"alice", dp, Caps{Epsilon: -1}}} {
		if _, err := l.Hold(ctx, bad.analyst, bad.kind, bad.caps); err == nil {
			t.Errorf("Hold(%q, %q, %+v) accepted", bad.analyst, bad.kind, bad.caps)
		}
	}
}

// TestListShowsHeldCaps: List reports the caps in force, the config's
// lowered to the held ones (plus grants), and reading them holds nothing.
func TestListShowsHeldCaps(t *testing.T) {
	ctx := context.Background()
	l := openLedger(t, newStatePath(t), 1)
	if _, err := l.Charge(ctx, Entry{Analyst: "alice", Mechanism: "laplace", Kind: dp, Epsilon: 0.1}, Caps{Epsilon: 2, Delta: 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Charge(ctx, Entry{Analyst: "bob", Mechanism: "laplace", Kind: dp, Epsilon: 0.1}, Caps{Epsilon: 2, Delta: 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Hold(ctx, "alice", dp, Caps{Epsilon: 0.5, Delta: 0}); err != nil {
		t.Fatal(err)
	}
	if err := l.Grant(ctx, "alice", dp, 0.25, 0); err != nil {
		t.Fatal(err)
	}
	config := func(string) Caps { return Caps{Epsilon: 2, Delta: 1e-6} } // a config that raised both
	list, err := l.List(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{"alice": {0.75, 0}, "bob": {2, 1e-6}} // held 0.5 + granted 0.25; bob holds nothing
	if len(list) != len(want) {
		t.Fatalf("List = %+v, want one balance each for %v", list, want)
	}
	for _, b := range list {
		if got := [2]float64{b.EpsilonCap, b.DeltaCap}; got != want[b.Analyst] {
			t.Errorf("%s: caps %v, want %v", b.Analyst, got, want[b.Analyst])
		}
	}
	if _, ok, err := l.heldCaps(ctx, "bob", dp); err != nil || ok {
		t.Errorf("List held caps for bob (%v)", err)
	}
}
