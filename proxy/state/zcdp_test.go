package state

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"countwall/ir"
)

// TestLedgerComposesRhoUnderZCDP: rho charges are summed and the sum is
// converted to epsilon at the delta the cap leaves, added to the pure
// charges, held to the epsilon cap, and kept across a reopen; a laplace
// reservation open when a rho charge arrives is settled first.
func TestLedgerComposesRhoUnderZCDP(t *testing.T) {
	for _, reserve := range []int{1, 10} {
		path := newStatePath(t)
		l := openLedger(t, path, reserve)
		ctx := context.Background()
		caps := Caps{Epsilon: 5, Delta: 1e-5}
		const rho = 0.01
		var pure float64
		for i := range 20 {
			if i%5 == 0 {
				if _, err := l.Charge(ctx, Entry{Analyst: "ann", Mechanism: "laplace", Kind: dp, Epsilon: 0.05}, caps); err != nil {
					t.Fatal(err)
				}
				pure += 0.05
			}
			bal, err := l.Charge(ctx, Entry{Analyst: "ann", Mechanism: "gaussian", Kind: dp, Rho: rho}, caps)
			if err != nil {
				t.Fatalf("reserve %d, rho charge %d: %v", reserve, i, err)
			}
			want := pure + ir.ZCDPEpsilon(rho*float64(i+1), 1e-5)
			if math.Abs(bal.EpsilonSpent-want) > 1e-9 || math.Abs(bal.RhoSpent-rho*float64(i+1)) > 1e-12 || bal.DeltaSpent != 1e-5 {
				t.Fatalf("reserve %d, after %d rho charges: spent epsilon %g, rho %g, delta %g; want %g, %g, 1e-5",
					reserve, i+1, bal.EpsilonSpent, bal.RhoSpent, bal.DeltaSpent, want, rho*float64(i+1))
			}
		}
		// 20 answers at rho 0.01 cost epsilon 3.23 here and 400 would cost
		// 17.6: 20 times the answers for 5.4 times the epsilon, where basic
		// composition of their (epsilon, delta) charges 20 times as much. The next rho that takes the total past 5 is refused.
		var refused bool
		for range 40 {
			if _, err := l.Charge(ctx, Entry{Analyst: "ann", Mechanism: "gaussian", Kind: dp, Rho: rho}, caps); err != nil {
				if !isExhausted(err) {
					t.Fatal(err)
				}
				refused = true
				break
			}
		}
		if !refused {
			t.Fatalf("reserve %d: rho charges past the cap were not refused", reserve)
		}
		bals, err := l.Balances(ctx, "ann", caps)
		if err != nil {
			t.Fatal(err)
		}
		if bals[0].EpsilonSpent > 5*(1+1e-9) {
			t.Errorf("reserve %d: spent %g past the cap 5", reserve, bals[0].EpsilonSpent)
		}
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
		again := openLedger(t, path, 1)
		after, err := again.Balances(ctx, "ann", caps)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(after[0].EpsilonSpent-bals[0].EpsilonSpent) > 1e-9 || after[0].RhoSpent != bals[0].RhoSpent {
			t.Errorf("reserve %d: after reopening %+v, before %+v", reserve, after[0], bals[0])
		}
		// Without caps (countwall budget list) rho stands apart.
		list, err := again.List(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || math.Abs(list[0].EpsilonSpent-pure) > 1e-9 || list[0].RhoSpent != bals[0].RhoSpent {
			t.Errorf("reserve %d: list %+v, want pure epsilon %g and rho apart", reserve, list, pure)
		}
	}
}

// TestLedgerAddsTheRhoColumn: a state database written before rho existed
// gains the column, and its rows hold rho 0.
func TestLedgerAddsTheRhoColumn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := openStateDB(t, path)
	for _, stmt := range []string{
		`CREATE TABLE ledger (id INTEGER PRIMARY KEY, at TEXT NOT NULL, analyst TEXT NOT NULL, mechanism TEXT NOT NULL, kind TEXT NOT NULL, epsilon REAL NOT NULL, delta REAL NOT NULL, fingerprint TEXT NOT NULL)`,
		`CREATE TABLE ledger_spent (analyst TEXT NOT NULL, kind TEXT NOT NULL, epsilon REAL NOT NULL, delta REAL NOT NULL, PRIMARY KEY (analyst, kind))`,
		`INSERT INTO ledger_spent VALUES ('ann', 'dp', 0.5, 0)`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	l, err := OpenLedger(context.Background(), db, LedgerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bal, err := l.Charge(context.Background(), Entry{Analyst: "ann", Mechanism: "gaussian", Kind: dp, Rho: 0.02}, Caps{Epsilon: 10, Delta: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	if want := 0.5 + ir.ZCDPEpsilon(0.02, 1e-6); math.Abs(bal.EpsilonSpent-want) > 1e-12 {
		t.Errorf("spent %g, want %g", bal.EpsilonSpent, want)
	}
}
