package state

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"countwall/ir"
)

// CapsSource is where an analyst's caps come from: the config, which gives
// each listed analyst her own caps and everyone else the budget section's.
// *config.Config implements it.
type CapsSource interface {
	// AnalystCaps returns the caps set for analyst, and whether the
	// analyst is listed by name (else they are the default caps).
	AnalystCaps(analyst string) (epsilon, delta float64, listed bool)
	// AnalystNames lists the analysts named in the source.
	AnalystNames() []string
}

// CapsOf returns the caps src sets for analyst.
func CapsOf(src CapsSource, analyst string) Caps {
	eps, delta, _ := src.AnalystCaps(analyst)
	return Caps{Epsilon: eps, Delta: delta}
}

// CapsFrom adapts src to List's lookup of caps.
func CapsFrom(src CapsSource) func(analyst string) Caps {
	return func(analyst string) Caps { return CapsOf(src, analyst) }
}

// Budget is the ledger as the firewall uses it: caps come from a
// CapsSource (per analyst, else the default) and apply to each accounting
// kind separately; they are held by the ledger, so that a config change can
// lower them but never raise them. It is safe for concurrent use.
type Budget struct {
	ledger *Ledger
	src    atomic.Pointer[sourceBox]

	// held caches the ledger's held caps, so that a charge under an
	// unchanged or higher configured cap costs no write.
	heldMu sync.Mutex
	held   map[heldKey]Caps
}

// sourceBox lets an interface value be swapped atomically.
type sourceBox struct{ CapsSource }

type heldKey struct {
	analyst string
	kind    ir.Accounting
}

// NewBudget holds l's analysts to the caps src sets. Close closes l.
func NewBudget(l *Ledger, src CapsSource) *Budget {
	b := &Budget{ledger: l, held: map[heldKey]Caps{}}
	b.src.Store(&sourceBox{src})
	return b
}

// caps are the analyst's caps in force for kind: the source's, unless the
// ledger holds lower ones.
func (b *Budget) caps(ctx context.Context, analyst string, kind ir.Accounting) (Caps, error) {
	return b.hold(ctx, analyst, kind, CapsOf(b.src.Load(), analyst))
}

// hold offers caps to the ledger unless the cached held caps are already
// as low, and returns the held caps.
func (b *Budget) hold(ctx context.Context, analyst string, kind ir.Accounting, offered Caps) (Caps, error) {
	key := heldKey{analyst, kind}
	b.heldMu.Lock()
	defer b.heldMu.Unlock()
	if h, ok := b.held[key]; ok && offered.Epsilon >= h.Epsilon && offered.Delta >= h.Delta {
		return h, nil
	}
	h, err := b.ledger.Hold(ctx, analyst, kind, offered)
	if err != nil {
		return Caps{}, err
	}
	b.held[key] = h
	return h, nil
}

// Charge records e durably against the caps in force for its analyst and
// kind, or refuses it with a *pgerror.Error (then nothing is charged).
func (b *Budget) Charge(ctx context.Context, e Entry) (Balance, error) {
	caps, err := b.caps(ctx, e.Analyst, e.Kind)
	if err != nil {
		return Balance{}, err
	}
	return b.ledger.Charge(ctx, e, caps)
}

// Balances lists the analyst's standing in every accounting kind, against
// the caps in force plus grants.
//
// Each kind is read against its own caps, so that zCDP spending is shown
// converted at the delta cap the charges are held to (not at an unlimited
// one).
func (b *Budget) Balances(ctx context.Context, analyst string) ([]Balance, error) {
	bals := make([]Balance, 0, len(Kinds))
	for _, kind := range Kinds {
		caps, err := b.caps(ctx, analyst, kind)
		if err != nil {
			return nil, err
		}
		bal, err := b.ledger.BalanceOf(ctx, analyst, kind, caps)
		if err != nil {
			return nil, err
		}
		bals = append(bals, bal)
	}
	return bals, nil
}

// Configure applies a reloaded source. Before the new caps take over, the
// old source's caps are held for every analyst it listed whose caps the new
// one would raise or who is gone, so that no edit raises a budget, even of
// an analyst who has not yet spent anything.
func (b *Budget) Configure(ctx context.Context, src CapsSource) error {
	old := b.src.Load()
	for _, name := range old.AnalystNames() {
		was := CapsOf(old, name)
		nowEps, nowDelta, listed := src.AnalystCaps(name)
		if listed && nowEps <= was.Epsilon && nowDelta <= was.Delta {
			continue
		}
		for _, kind := range Kinds {
			if _, err := b.hold(ctx, name, kind, was); err != nil {
				return fmt.Errorf("holding %s's caps: %w", name, err)
			}
		}
	}
	b.src.Store(&sourceBox{src})
	return nil
}

// Unraised is a raise the ledger does not apply: the config sets an
// analyst's caps above those held for the kinds listed.
type Unraised struct {
	Analyst          string
	Kinds            []ir.Accounting
	Held, Configured Caps
}

// Unraised lists, for each analyst src names, the caps the ledger holds
// below those src sets, the kinds held alike together. It reads the held
// caps and holds nothing.
func (b *Budget) Unraised(ctx context.Context, src CapsSource) ([]Unraised, error) {
	var out []Unraised
	for _, name := range src.AnalystNames() {
		configured := CapsOf(src, name)
		for _, kind := range Kinds {
			held, ok, err := b.ledger.heldCaps(ctx, name, kind)
			if err != nil {
				return nil, err
			}
			if !ok || (held.Epsilon >= configured.Epsilon && held.Delta >= configured.Delta) {
				continue
			}
			if n := len(out); n > 0 && out[n-1].Analyst == name && out[n-1].Held == held {
				out[n-1].Kinds = append(out[n-1].Kinds, kind)
				continue
			}
			out = append(out, Unraised{Analyst: name, Kinds: []ir.Accounting{kind}, Held: held, Configured: configured})
		}
	}
	return out, nil
}

// Grants are the commands that give u's analyst, kind by kind, what the
// config's raise would have: `countwall budget grant`, the only way up.
func (u Unraised) Grants(configPath string) string {
	var cmds []string
	for _, kind := range u.Kinds {
		cmd := fmt.Sprintf("countwall budget grant %s --kind %s", u.Analyst, kind)
		if d := u.Configured.Epsilon - u.Held.Epsilon; d > 0 {
			cmd += " --epsilon " + FormatFigure(d)
		}
		if d := u.Configured.Delta - u.Held.Delta; d > 0 {
			cmd += " --delta " + FormatFigure(d)
		}
		if configPath != "" {
			cmd += " --config " + configPath
		}
		cmds = append(cmds, cmd)
	}
	return strings.Join(cmds, "; ")
}

// Close settles the ledger's open reservations.
func (b *Budget) Close() error { return b.ledger.Close(context.Background()) }

// Notice tells the analyst what an answer cost (c) and what remains (b, the
// balance after the charge).
//
// Every figure is a FormatFigure: the rho and zCDP figures to 6
// significant digits, as a conversion's result reads best.
func (b Balance) Notice(c ir.Charge) string {
	f := FormatFigure
	msg := fmt.Sprintf("charged epsilon %s (%s); remaining epsilon %s of %s", f(c.Epsilon), c.Kind, f(b.EpsilonRemaining()), f(b.EpsilonCap))
	if c.Rho > 0 {
		// The delta cap is all given to the zCDP conversion: no delta line.
		if c.Epsilon > 0 || c.Delta > 0 { // a partition selection's part, charged beside rho
			return fmt.Sprintf("charged rho %.6g and epsilon %s, delta %s (%s, zCDP: rho spent %.6g with the pure charges is epsilon %.6g at delta %s); remaining epsilon %s of %s",
				c.Rho, f(c.Epsilon), f(c.Delta), c.Kind, b.RhoSpent, b.EpsilonSpent, f(b.DeltaSpent), f(b.EpsilonRemaining()), f(b.EpsilonCap))
		}
		return fmt.Sprintf("charged rho %.6g (%s, zCDP: rho spent %.6g is epsilon %.6g at delta %s); remaining epsilon %s of %s",
			c.Rho, c.Kind, b.RhoSpent, b.EpsilonSpent, f(b.DeltaSpent), f(b.EpsilonRemaining()), f(b.EpsilonCap))
	}
	if c.Delta > 0 || b.DeltaSpent > 0 {
		msg += fmt.Sprintf("; charged delta %s, remaining delta %s of %s", f(c.Delta), f(b.DeltaRemaining()), f(b.DeltaCap))
	}
	return msg
}

// EntryOf is the ledger entry for an answer of mechanism that cost c.
func EntryOf(analyst, mechanism, fingerprint string, c ir.Charge) Entry {
	return Entry{Analyst: analyst, Mechanism: mechanism, Kind: c.Kind,
		Epsilon: c.Epsilon, Delta: c.Delta, Rho: c.Rho, Fingerprint: fingerprint}
}
