package state

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"countwall/ir"
)

// Reservations (LedgerOptions.Reserve > 1): one durable write reserves
// several queries' worth of an analyst's budget of one kind, which this
// process then spends in memory. Pure (epsilon, delta) charges and zCDP
// (rho) charges are reserved alike, and under the same rule: a reservation
// counts as spent from the moment it is written, so a crash can only make
// the ledger show more spent than was answered, never less. Every charge,
// from a reservation or committed on its own, is let through or refused by
// admit against the same figures, so a reservation changes how often the
// ledger writes, never which charges fit.

// chunk is an open reservation: written to the database (and counted as
// spent there) in full; remaining is what this process has not used.
type chunk struct {
	id                                         int64
	remainingEps, remainingDelta, remainingRho float64
	// answered is the kind's raw balance (readRaw's) as this process has
	// spent it: the durable totals before the reservation was written plus
	// each charge taken from it, with the grants then and the caps of the
	// last charge. An in-memory spend must keep it within the caller's
	// current caps plus those grants.
	answered Balance
	// foldedRaw and folded remember the last fold of rho (foldRho), which
	// costs microseconds: a charge's check ends where the next one's starts.
	foldedRaw, folded Balance
	// charges counts the charges spent from the reservation, and runs
	// summarise them for the history (ledger_history.go).
	charges int
	runs    []chargeRun
}

// spend takes e, charged at at, from the reservation; raw is the answered
// balance e was admitted against.
func (c *chunk) spend(at time.Time, raw Balance, e Entry) {
	c.remainingEps -= e.Epsilon
	c.remainingDelta -= e.Delta
	c.remainingRho -= e.Rho
	c.answered = raw.plus(e, 1)
	c.charges++
	c.runs = appendCharge(c.runs, at, e)
}

// answeredRaw is the answered balance against caps plus the grants.
func (c *chunk) answeredRaw(caps Caps) Balance {
	b := c.answered
	b.EpsilonCap, b.DeltaCap = caps.Epsilon+b.EpsilonGranted, caps.Delta+b.DeltaGranted
	return b
}

// fold is foldRho(raw), remembered.
func (c *chunk) fold(raw Balance) Balance {
	if raw != c.foldedRaw {
		c.foldedRaw, c.folded = raw, foldRho(raw)
	}
	return c.folded
}

// withReserved is b with what remains of the reservation.
func (c *chunk) withReserved(b Balance) Balance {
	b.EpsilonReserved, b.DeltaReserved, b.RhoReserved = c.remainingEps, c.remainingDelta, c.remainingRho
	return b
}

// spendReserved takes e from the open reservation c when c holds enough
// of each amount and e fits the caller's current caps (a reload may have
// lowered them since c was written), and reports whether it did. When it
// did not, the caller settles c and decides against the durable totals.
func (l *Ledger) spendReserved(c *chunk, e Entry, caps Caps) (Balance, bool) {
	if c.charges >= l.reserve || c.remainingEps < e.Epsilon || c.remainingDelta < e.Delta || c.remainingRho < e.Rho {
		return Balance{}, false
	}
	raw := c.answeredRaw(caps)
	after, refusal := admit(raw, e, c.fold)
	if refusal != nil {
		return Balance{}, false
	}
	c.spend(l.now(), raw, e)
	return c.withReserved(after), true
}

// chargeReserving settles the kind's open reservation (if any) and takes a
// new one that covers e, in one transaction.
func (l *Ledger) chargeReserving(ctx context.Context, st *analystState, e Entry, caps Caps) (Balance, error) {
	old := st.chunks[e.Kind]
	at := l.now()
	var next *chunk
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
		if bal, refusal = admit(raw, e, foldRho); refusal != nil {
			return nil // commit the settlement, charge nothing
		}
		resEps, resDelta, resRho := l.reservationFor(raw, e)
		res, err := tx.ExecContext(ctx, `INSERT INTO ledger_reservations (at, analyst, kind, epsilon, delta, rho) VALUES (?, ?, ?, ?, ?, ?)`,
			at.UTC().Format(time.RFC3339Nano), e.Analyst, string(e.Kind), resEps, resDelta, resRho)
		if err != nil {
			return fmt.Errorf("ledger: writing reservation: %w", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("ledger: writing reservation: %w", err)
		}
		if err := addSpent(ctx, tx, e.Analyst, e.Kind, resEps, resDelta, resRho); err != nil {
			return err
		}
		next = &chunk{id: id, remainingEps: resEps, remainingDelta: resDelta, remainingRho: resRho}
		next.spend(at, raw, e)
		return nil
	})
	if err != nil {
		return Balance{}, err
	}
	delete(st.chunks, e.Kind) // settled
	if refusal != nil {
		return Balance{}, refusal
	}
	st.chunks[e.Kind] = next
	return next.withReserved(bal), nil
}

// reservationFor is what to reserve for e, which admit has let through
// against raw. A pure charge reserves up to l.reserve times its epsilon
// and its delta, each up to what is left of its cap (reservation). A zCDP
// charge reserves whole multiples of e (rhoMultiple): the sum of rho is
// converted to epsilon together with the pure spending, so what is left
// is not a figure per amount.
func (l *Ledger) reservationFor(raw Balance, e Entry) (eps, delta, rho float64) {
	if e.Rho == 0 {
		b := foldRho(raw)
		return reservation(e.Epsilon, l.reserve, b.EpsilonCap-b.EpsilonSpent), reservation(e.Delta, l.reserve, b.DeltaCap-b.DeltaSpent), 0
	}
	k := float64(rhoMultiple(raw, e, l.reserve))
	return k * e.Epsilon, k * e.Delta, k * e.Rho
}

// reservation is how much to reserve for a charge of cost: reserve times
// the cost, or what is available if less (never less than the cost, which
// the caller has checked fits).
func reservation(cost float64, reserve int, available float64) float64 {
	if cost == 0 {
		return 0
	}
	return math.Max(cost, math.Min(cost*float64(reserve), available))
}

// settle writes a reservation's answered charges to the history and gives
// back its unused part. If the reservation is gone (an analyst reset by another process),
// the entries are charged afresh instead: counting them twice is the safe
// side.
func settle(ctx context.Context, tx *sql.Conn, analyst string, kind ir.Accounting, c *chunk) error {
	if c == nil { // no reservation open
		return nil
	}
	if err := writeHistory(ctx, tx, analyst, kind, c.runs); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM ledger_reservations WHERE id = ?`, c.id)
	if err != nil {
		return fmt.Errorf("ledger: settling reservation: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("ledger: settling reservation: %w", err)
	} else if n == 1 {
		return addSpent(ctx, tx, analyst, kind, -c.remainingEps, -c.remainingDelta, -c.remainingRho)
	}
	usedEps, usedDelta, usedRho := used(c.runs)
	return addSpent(ctx, tx, analyst, kind, usedEps, usedDelta, usedRho)
}
