package state

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// rhoCase is a zCDP charge and caps that exactly n such charges meet.
type rhoCase struct {
	name     string
	e        Entry
	deltaCap float64
	n        int
}

var rhoCases = []rhoCase{
	{"rho alone", Entry{Analyst: "ann", Mechanism: "gaussian", Kind: dp, Rho: 0.01, Fingerprint: "q"}, 1e-5, 23},
	// A GROUP BY over undeclared columns: its partition selection is
	// charged epsilon and delta beside the counts' rho.
	{"rho beside a selection", Entry{Analyst: "ann", Mechanism: "gaussian", Kind: dp, Rho: 0.004, Epsilon: 0.01, Delta: 1e-8, Fingerprint: "q"}, 1e-5, 37},
}

// caps are the case's caps: the epsilon that n charges, converted, cost.
func (c rhoCase) caps() Caps {
	return Caps{Epsilon: c.spent(c.n).EpsilonSpent, Delta: c.deltaCap}
}

// spent is the balance after k of the case's charges, converted at its caps.
func (c rhoCase) spent(k int) Balance {
	return foldRho(Balance{DeltaCap: c.deltaCap}.plus(c.e, float64(k)))
}

// rhoReservationScenarios are what a reservation of rho must survive:
// each is run for every case and reserve.
var rhoReservationScenarios = []struct {
	name string
	run  func(t *testing.T, c rhoCase, reserve int) (refusal string)
}{
	{"up to the cap", rhoUpToTheCap},
	{"crash leaves the reservation spent", rhoCrash},
	{"two ledgers on one state", rhoTwoLedgers},
	{"reset", rhoReset},
}

// TestRhoReservations: zCDP charges reserved in chunks fit a cap exactly
// as often as charges committed one by one, are refused with the same
// words, write the same totals and history, and keep the crash rule: a
// reservation is spent from the moment it is written.
func TestRhoReservations(t *testing.T) {
	for _, sc := range rhoReservationScenarios {
		for _, c := range rhoCases {
			var want string // the refusal committed one by one
			for _, reserve := range []int{1, 7, 10, 100} {
				t.Run(fmt.Sprintf("%s/%s/reserve=%d", sc.name, c.name, reserve), func(t *testing.T) {
					got := sc.run(t, c, reserve)
					if reserve == 1 {
						want = got
					} else if got != want {
						t.Errorf("refused with %q, committed one by one %q", got, want)
					}
				})
			}
		}
	}
}

// chargeN charges c's entry until it is refused (at most limit times) and
// returns how many were answered and the refusal's words.
func chargeN(t *testing.T, l *Ledger, c rhoCase, limit int) (int, string) {
	t.Helper()
	for i := range limit {
		bal, err := l.Charge(context.Background(), c.e, c.caps())
		if isExhausted(err) {
			return i, err.Error()
		}
		if err != nil {
			t.Fatalf("charge %d: %v", i+1, err)
		}
		if bal.RhoReserved < 0 || bal.EpsilonReserved < 0 || bal.DeltaReserved < 0 {
			t.Fatalf("charge %d: reserved %+v", i+1, bal)
		}
	}
	return limit, ""
}

// checkSettled checks the state after every reservation is settled: the
// totals and the history are answered charges of c's entry.
func checkSettled(t *testing.T, path string, c rhoCase, answered int) {
	t.Helper()
	checkState(t, path, c, answered, answered)
}

// checkState checks that the totals are those of spent of c's charges and
// the history holds answered of them.
func checkState(t *testing.T, path string, c rhoCase, spent, answered int) {
	t.Helper()
	b, err := openLedger(t, path, 1).BalanceOf(context.Background(), c.e.Analyst, dp, c.caps())
	if err != nil {
		t.Fatal(err)
	}
	want := c.spent(spent)
	if math.Abs(b.RhoSpent-want.RhoSpent) > 1e-12 || math.Abs(b.EpsilonSpent-want.EpsilonSpent) > 1e-9 || math.Abs(b.DeltaSpent-want.DeltaSpent) > 1e-18 {
		t.Errorf("the state holds epsilon %v, delta %v, rho %v; %d answers cost %v, %v, %v",
			b.EpsilonSpent, b.DeltaSpent, b.RhoSpent, spent, want.EpsilonSpent, want.DeltaSpent, want.RhoSpent)
	}
	var n int
	var eps, delta, rho float64
	if err := openStateDB(t, path).QueryRow(`SELECT coalesce(sum(charges), 0), coalesce(sum(epsilon), 0), coalesce(sum(delta), 0), coalesce(sum(rho), 0) FROM ledger WHERE analyst = ?`,
		c.e.Analyst).Scan(&n, &eps, &delta, &rho); err != nil {
		t.Fatal(err)
	}
	k := float64(answered)
	if n != answered || math.Abs(eps-k*c.e.Epsilon) > 1e-12 || math.Abs(delta-k*c.e.Delta) > 1e-20 || math.Abs(rho-k*c.e.Rho) > 1e-12 {
		t.Errorf("the history holds %d charges of epsilon %v, delta %v, rho %v; want %d of %v, %v, %v",
			n, eps, delta, rho, answered, k*c.e.Epsilon, k*c.e.Delta, k*c.e.Rho)
	}
}

// rhoUpToTheCap: exactly n charges fit, the next is refused; no durable
// total, reservation included, ever passes the cap.
func rhoUpToTheCap(t *testing.T, c rhoCase, reserve int) string {
	path := newStatePath(t)
	l := openLedger(t, path, reserve)
	other := openLedger(t, path, 1) // another process's view: reservations count
	ctx := context.Background()
	for i := range c.n {
		bal, err := l.Charge(ctx, c.e, c.caps())
		if err != nil {
			t.Fatalf("charge %d of %d: %v", i+1, c.n, err)
		}
		if want := c.spent(i + 1); math.Abs(bal.EpsilonSpent-want.EpsilonSpent) > 1e-9 || math.Abs(bal.RhoSpent-want.RhoSpent) > 1e-12 {
			t.Fatalf("after %d charges: epsilon %v, rho %v; want %v, %v", i+1, bal.EpsilonSpent, bal.RhoSpent, want.EpsilonSpent, want.RhoSpent)
		}
		durable, err := other.BalanceOf(ctx, c.e.Analyst, dp, c.caps())
		if err != nil {
			t.Fatal(err)
		}
		if durable.EpsilonSpent > c.caps().Epsilon*(1+capTolerance) || durable.EpsilonSpent < bal.EpsilonSpent*(1-1e-12) {
			t.Fatalf("after %d charges the state holds epsilon %v: answered %v, cap %v", i+1, durable.EpsilonSpent, bal.EpsilonSpent, c.caps().Epsilon)
		}
		if i == c.n-1 && durable.EpsilonRemaining() != 0 {
			t.Errorf("after the last charge %v remains", durable.EpsilonRemaining())
		}
	}
	n, refusal := chargeN(t, l, c, 1)
	if n != 0 {
		t.Fatalf("charge %d past the cap answered", c.n+1)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	checkSettled(t, path, c, c.n)
	// One row of the history a reservation: the charges shared writes. Near
	// the cap a reservation holds what is left, so a few more than n/reserve.
	var rows int
	if err := openStateDB(t, path).QueryRow(`SELECT count(*) FROM ledger`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if most := (c.n+reserve-1)/reserve + 3; rows > min(most, c.n) {
		t.Errorf("%d rows of history for %d charges reserved %d at a time, want at most %d", rows, c.n, reserve, min(most, c.n))
	}
	return refusal
}

// rhoCrash: a ledger that stops without settling leaves its whole
// reservation spent; the next process answers only what is left after it.
func rhoCrash(t *testing.T, c rhoCase, reserve int) string {
	path := newStatePath(t)
	const before = 3
	if n, _ := chargeN(t, openLedger(t, path, reserve), c, before); n != before {
		t.Fatalf("%d of %d charges answered", n, before)
	}
	// No Close: the reservation is never settled.
	again := openLedger(t, path, reserve)
	held := min(reserve, c.n)
	if reserve == 1 {
		held = before
	}
	b, err := again.BalanceOf(context.Background(), c.e.Analyst, dp, c.caps())
	if err != nil {
		t.Fatal(err)
	}
	if want := c.spent(held); math.Abs(b.RhoSpent-want.RhoSpent) > 1e-12 || math.Abs(b.EpsilonSpent-want.EpsilonSpent) > 1e-9 {
		t.Errorf("after the crash the state holds epsilon %v, rho %v; the reservation of %d charges is %v, %v",
			b.EpsilonSpent, b.RhoSpent, held, want.EpsilonSpent, want.RhoSpent)
	}
	n, refusal := chargeN(t, again, c, c.n+1)
	if n != c.n-held {
		t.Errorf("after the crash %d charges answered, want %d", n, c.n-held)
	}
	return refusal
}

// rhoTwoLedgers: two ledgers (two processes) share one state; each sees
// the other's reservation as spent. Once one is refused (settling its
// reservation), the other answers up to the cap: n in all.
func rhoTwoLedgers(t *testing.T, c rhoCase, reserve int) string {
	path := newStatePath(t)
	a, b := openLedger(t, path, reserve), openLedger(t, path, reserve)
	answered, last := 0, -1
	for turn := 0; ; turn++ {
		l := a
		if turn%2 == 1 {
			l = b
		}
		n, refusal := chargeN(t, l, c, 1)
		answered += n
		if refusal == "" {
			continue
		}
		if last >= 0 && last != turn%2 { // both refused
			for _, l := range []*Ledger{a, b} {
				if err := l.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if answered != c.n {
				t.Errorf("%d charges answered by two ledgers, want %d", answered, c.n)
			}
			checkSettled(t, path, c, answered)
			return refusal
		}
		last = turn % 2
		if turn > 4*c.n {
			t.Fatal("the ledgers never stopped answering")
		}
	}
}

// rhoReset: a reset by another process clears what was committed, and
// takes a reservation away: the charges answered from it are charged
// afresh when it is settled. After a reset by the ledger itself n charges
// fit again.
func rhoReset(t *testing.T, c rhoCase, reserve int) string {
	path := newStatePath(t)
	ctx := context.Background()
	l := openLedger(t, path, reserve)
	const early = 5
	if n, _ := chargeN(t, l, c, early); n != early {
		t.Fatalf("%d of %d charges answered", n, early)
	}
	if err := openLedger(t, path, reserve).Reset(ctx, c.e.Analyst); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if reserve == 1 {
		checkState(t, path, c, 0, early)
	} else {
		checkState(t, path, c, early, early)
	}
	if err := l.Reset(ctx, c.e.Analyst); err != nil {
		t.Fatal(err)
	}
	n, refusal := chargeN(t, l, c, c.n+1)
	if n != c.n {
		t.Errorf("after the reset %d charges answered, want %d", n, c.n)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	checkState(t, path, c, c.n, early+c.n)
	return refusal
}
