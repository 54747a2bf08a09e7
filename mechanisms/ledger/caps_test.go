package ledger

import (
	"context"
	"path/filepath"
	"testing"

	"countwall/mechanisms"
)

// TestHoldNeverRaisesACap: the held cap is the lowest offered so far, field
// by field, per analyst and kind, and survives reopening the ledger.
func TestHoldNeverRaisesACap(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	l := openLedger(t, path, 1)
	idp := mechanisms.AccountingIDP
	steps := []struct {
		analyst string
		kind    mechanisms.Accounting
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
		kind    mechanisms.Accounting
		caps    Caps
	}{{"", dp, Unlimited()}, {"alice", "nope", Unlimited()}, {"alice", dp, Caps{Epsilon: -1}}} {
		if _, err := l.Hold(ctx, bad.analyst, bad.kind, bad.caps); err == nil {
			t.Errorf("Hold(%q, %q, %+v) accepted", bad.analyst, bad.kind, bad.caps)
		}
	}
}
