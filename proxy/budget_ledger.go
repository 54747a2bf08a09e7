package proxy

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"countwall/config"
	"countwall/mechanisms"
	"countwall/mechanisms/ledger"
	"countwall/proxy/statedb"
)

// ledgerBudget is the Budget over the durable ledger in the state database.
// Caps come from the config (per analyst, else the budget section's) and
// apply to each accounting kind separately; they are held by the ledger, so
// that a config change can lower them but never raise them.
type ledgerBudget struct {
	ledger *ledger.Ledger
	cfg    atomic.Pointer[config.Config]

	// held caches the ledger's held caps, so that a charge under an
	// unchanged or higher config cap costs no write.
	heldMu sync.Mutex
	held   map[heldKey]ledger.Caps
}

type heldKey struct {
	analyst string
	kind    mechanisms.Accounting
}

func openBudget(ctx context.Context, state *statedb.DB, cfg *config.Config) (Budget, error) {
	l, err := ledger.Open(ctx, state.SQL(), ledger.Options{Reserve: cfg.Budget.Reserve})
	if err != nil {
		return nil, err
	}
	b := &ledgerBudget{ledger: l, held: map[heldKey]ledger.Caps{}}
	b.cfg.Store(cfg)
	return b, nil
}

// configCaps are the caps the config offers an analyst.
func configCaps(cfg *config.Config, analyst string) ledger.Caps {
	if a, ok := cfg.Analysts[analyst]; ok {
		return ledger.Caps{Epsilon: a.EpsilonCap, Delta: a.DeltaCap}
	}
	return ledger.Caps{Epsilon: cfg.Budget.EpsilonCap, Delta: cfg.Budget.DeltaCap}
}

// caps are the analyst's caps in force for kind: the config's, unless the
// ledger holds lower ones.
func (b *ledgerBudget) caps(ctx context.Context, analyst string, kind mechanisms.Accounting) (ledger.Caps, error) {
	return b.hold(ctx, analyst, kind, configCaps(b.cfg.Load(), analyst))
}

// hold offers caps to the ledger unless the cached held caps are already
// as low, and returns the held caps.
func (b *ledgerBudget) hold(ctx context.Context, analyst string, kind mechanisms.Accounting, offered ledger.Caps) (ledger.Caps, error) {
	key := heldKey{analyst, kind}
	b.heldMu.Lock()
	defer b.heldMu.Unlock()
	if h, ok := b.held[key]; ok && offered.Epsilon >= h.Epsilon && offered.Delta >= h.Delta {
		return h, nil
	}
	h, err := b.ledger.Hold(ctx, analyst, kind, offered)
	if err != nil {
		return ledger.Caps{}, err
	}
	b.held[key] = h
	return h, nil
}

func (b *ledgerBudget) Charge(ctx context.Context, req ChargeRequest) (Balance, error) {
	caps, err := b.caps(ctx, req.Analyst, req.Charge.Kind)
	if err != nil {
		return Balance{}, err
	}
	bal, err := b.ledger.Charge(ctx, ledger.Entry{
		Analyst: req.Analyst, Mechanism: req.Mechanism, Kind: req.Charge.Kind,
		Epsilon: req.Charge.Epsilon, Delta: req.Charge.Delta, Rho: req.Charge.Rho, Fingerprint: req.Fingerprint,
		Within: req.Within,
	}, caps)
	if err != nil {
		return Balance{}, err
	}
	return fromLedger(bal), nil
}

func (b *ledgerBudget) Balances(ctx context.Context, analyst string) ([]Balance, error) {
	bals, err := b.ledger.Balances(ctx, analyst, ledger.Unlimited())
	if err != nil {
		return nil, err
	}
	out := make([]Balance, len(bals))
	for i, bal := range bals {
		caps, err := b.caps(ctx, analyst, bal.Kind)
		if err != nil {
			return nil, err
		}
		bal.EpsilonCap, bal.DeltaCap = caps.Epsilon+bal.EpsilonGranted, caps.Delta+bal.DeltaGranted
		out[i] = fromLedger(bal)
	}
	return out, nil
}

// Configure applies a reloaded config. Before the new caps take over, the
// old config's caps are held for every analyst it listed whose caps the new
// one would raise or who is gone, so that no edit raises a budget, even of
// an analyst who has not yet spent anything.
func (b *ledgerBudget) Configure(ctx context.Context, cfg *config.Config) error {
	old := b.cfg.Load()
	for name := range old.Analysts {
		was, now := configCaps(old, name), configCaps(cfg, name)
		if _, listed := cfg.Analysts[name]; listed && now.Epsilon <= was.Epsilon && now.Delta <= was.Delta {
			continue
		}
		for _, kind := range ledger.Kinds {
			if _, err := b.hold(ctx, name, kind, was); err != nil {
				return fmt.Errorf("holding %s's caps: %w", name, err)
			}
		}
	}
	b.cfg.Store(cfg)
	return nil
}

func (b *ledgerBudget) Close() error { return b.ledger.Close(context.Background()) }

func fromLedger(b ledger.Balance) Balance {
	return Balance{Kind: b.Kind, EpsilonSpent: b.EpsilonSpent, EpsilonCap: b.EpsilonCap, DeltaSpent: b.DeltaSpent, DeltaCap: b.DeltaCap, RhoSpent: b.RhoSpent}
}
