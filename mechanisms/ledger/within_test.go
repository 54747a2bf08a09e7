package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"
)

// TestWithinRunsInTheChargesTransaction: Entry.Within runs inside each
// transaction that makes a charge durable (every charge with reserve 1, the
// first of each reservation with reserve 3) and not for a charge taken in
// memory; its error rolls the charge back.
func TestWithinRunsInTheChargesTransaction(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		reserve int
		ran     []bool // per charge
	}{
		{1, []bool{true, true, true, true}},
		{3, []bool{true, false, false, true}},
	} {
		t.Run(fmt.Sprintf("reserve=%d", tc.reserve), func(t *testing.T) {
			l := openLedger(t, newStatePath(t), tc.reserve)
			for i, want := range tc.ran {
				ran := false
				e := Entry{Analyst: "dora", Mechanism: "laplace", Kind: dp, Epsilon: 0.1, Fingerprint: "f",
					Within: func(ctx context.Context, tx *sql.Conn) error {
						ran = true
						var n int
						// Inside the transaction: the charge's own row is visible.
						return tx.QueryRowContext(ctx, `SELECT count(*) FROM ledger_spent WHERE analyst = 'dora'`).Scan(&n)
					}}
				if _, err := l.Charge(ctx, e, Unlimited()); err != nil {
					t.Fatal(err)
				}
				if ran != want {
					t.Errorf("charge %d: Within ran = %v, want %v", i+1, ran, want)
				}
			}
		})
	}
	l := openLedger(t, newStatePath(t), 1)
	boom := errors.New("boom")
	_, err := l.Charge(ctx, Entry{Analyst: "erin", Mechanism: "laplace", Kind: dp, Epsilon: 0.1, Fingerprint: "f",
		Within: func(context.Context, *sql.Conn) error { return boom }}, Unlimited())
	if !errors.Is(err, boom) {
		t.Fatalf("Charge with a failing Within: %v", err)
	}
	bals, err := l.Balances(ctx, "erin", Unlimited())
	if err != nil {
		t.Fatal(err)
	}
	if bals[0].EpsilonSpent != 0 {
		t.Errorf("a charge whose Within failed was kept: spent %g", bals[0].EpsilonSpent)
	}
}
