package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"countwall/config"
	"countwall/mechanisms"
)

// ChargeRequest is one answer's cost, to be recorded before the answer leaves.
type ChargeRequest struct {
	Analyst     string
	Mechanism   string
	Charge      mechanisms.Charge
	Fingerprint string
	// Within, when set, runs inside the transaction that makes the charge
	// durable, if one is written for it (see ledger.Entry.Within).
	Within func(ctx context.Context, tx *sql.Conn) error
}

// Balance is an analyst's spending of one accounting kind against its cap.
type Balance struct {
	Kind         mechanisms.Accounting
	EpsilonSpent float64
	EpsilonCap   float64
	DeltaSpent   float64
	DeltaCap     float64
	// RhoSpent is the zCDP spending (gaussian answers), already converted
	// into EpsilonSpent and DeltaSpent.
	RhoSpent float64
}

// EpsilonRemaining is what is left of the epsilon cap, never negative.
func (b Balance) EpsilonRemaining() float64 { return math.Max(0, b.EpsilonCap-b.EpsilonSpent) }

// DeltaRemaining is what is left of the delta cap, never negative.
func (b Balance) DeltaRemaining() float64 { return math.Max(0, b.DeltaCap-b.DeltaSpent) }

// Notice tells the analyst what an answer cost and what remains.
func (b Balance) Notice(c mechanisms.Charge) string {
	msg := fmt.Sprintf("charged epsilon %g (%s); remaining epsilon %g of %g", c.Epsilon, c.Kind, b.EpsilonRemaining(), b.EpsilonCap)
	if c.Rho > 0 {
		// The delta cap is all given to the zCDP conversion: no delta line.
		return fmt.Sprintf("charged rho %.6g (%s, zCDP: rho spent %.6g is epsilon %.6g at delta %g); remaining epsilon %.6g of %g",
			c.Rho, c.Kind, b.RhoSpent, b.EpsilonSpent, b.DeltaSpent, b.EpsilonRemaining(), b.EpsilonCap)
	}
	if c.Delta > 0 || b.DeltaSpent > 0 {
		msg += fmt.Sprintf("; charged delta %g, remaining delta %g of %g", c.Delta, b.DeltaRemaining(), b.DeltaCap)
	}
	return msg
}

// Budget is the ledger as the Engine uses it.
type Budget interface {
	// Charge records the cost durably, or refuses with a *pgerror.Error when
	// it would exceed the analyst's cap (then nothing is charged).
	Charge(ctx context.Context, req ChargeRequest) (Balance, error)
	// Balances lists the analyst's spending per accounting kind.
	Balances(ctx context.Context, analyst string) ([]Balance, error)
	// Configure applies new caps after a reload; caps may fall, never rise.
	Configure(ctx context.Context, cfg *config.Config) error
	Close() error
}
