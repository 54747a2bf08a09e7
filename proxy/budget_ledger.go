package proxy

import (
	"context"
	"sync/atomic"

	"countwall/config"
	"countwall/mechanisms/ledger"
	"countwall/proxy/statedb"
)

// ledgerBudget is the Budget over the durable ledger in the state database.
// Caps come from the config (per analyst, else the budget section's) and
// apply to each accounting kind separately.
type ledgerBudget struct {
	ledger *ledger.Ledger
	cfg    atomic.Pointer[config.Config]
}

func openBudget(ctx context.Context, state *statedb.DB, cfg *config.Config) (Budget, error) {
	l, err := ledger.Open(ctx, state.SQL(), ledger.Options{Reserve: cfg.Budget.Reserve})
	if err != nil {
		return nil, err
	}
	b := &ledgerBudget{ledger: l}
	b.cfg.Store(cfg)
	return b, nil
}

func (b *ledgerBudget) caps(analyst string) ledger.Caps {
	cfg := b.cfg.Load()
	if a, ok := cfg.Analysts[analyst]; ok {
		return ledger.Caps{Epsilon: a.EpsilonCap, Delta: a.DeltaCap}
	}
	return ledger.Caps{Epsilon: cfg.Budget.EpsilonCap, Delta: cfg.Budget.DeltaCap}
}

func (b *ledgerBudget) Charge(ctx context.Context, req ChargeRequest) (Balance, error) {
	bal, err := b.ledger.Charge(ctx, ledger.Entry{
		Analyst: req.Analyst, Mechanism: req.Mechanism, Kind: req.Charge.Kind,
		Epsilon: req.Charge.Epsilon, Delta: req.Charge.Delta, Rho: req.Charge.Rho, Fingerprint: req.Fingerprint,
	}, b.caps(req.Analyst))
	if err != nil {
		return Balance{}, err
	}
	return fromLedger(bal), nil
}

func (b *ledgerBudget) Balances(ctx context.Context, analyst string) ([]Balance, error) {
	bals, err := b.ledger.Balances(ctx, analyst, b.caps(analyst))
	if err != nil {
		return nil, err
	}
	out := make([]Balance, len(bals))
	for i, bal := range bals {
		out[i] = fromLedger(bal)
	}
	return out, nil
}

func (b *ledgerBudget) Configure(cfg *config.Config) error {
	b.cfg.Store(cfg)
	return nil
}

func (b *ledgerBudget) Close() error { return b.ledger.Close(context.Background()) }

func fromLedger(b ledger.Balance) Balance {
	return Balance{Kind: b.Kind, EpsilonSpent: b.EpsilonSpent, EpsilonCap: b.EpsilonCap, DeltaSpent: b.DeltaSpent, DeltaCap: b.DeltaCap, RhoSpent: b.RhoSpent}
}
