// Package admin is the data owner's offline work on a state database, as
// `countwall budget` and `countwall audit list` do it: finding the state
// database from a flag or a config, and listing, granting and resetting
// budgets under the config's caps.
package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"countwall/config"
	"countwall/mechanisms"
	"countwall/proxy/state"
)

// OpenState opens the state database at statePath, or else the one the
// config at configPath names; the config is returned when one was read.
// A state database that does not exist yet is refused, not created.
func OpenState(ctx context.Context, statePath, configPath string) (*state.DB, *config.Config, error) {
	var cfg *config.Config
	if configPath != "" {
		var err error
		if cfg, err = config.Load(configPath, nil); err != nil {
			return nil, nil, err
		}
		if statePath == "" {
			statePath = cfg.State
		}
	}
	if statePath == "" {
		return nil, nil, errors.New("--state or --config is required: which state database to use")
	}
	if err := state.Exists(statePath); err != nil {
		return nil, nil, err
	}
	st, err := state.Open(ctx, statePath, state.Options{})
	if err != nil {
		return nil, nil, err
	}
	return st, cfg, nil
}

// Budgets is the budget ledger of a state database, with the caps of the
// config when one was given.
type Budgets struct {
	state  *state.DB
	ledger *state.Ledger
	cfg    *config.Config
}

// OpenBudgets opens the ledger of the state database OpenState finds.
func OpenBudgets(ctx context.Context, statePath, configPath string) (*Budgets, error) {
	st, cfg, err := OpenState(ctx, statePath, configPath)
	if err != nil {
		return nil, err
	}
	return &Budgets{state: st, ledger: st.Ledger(), cfg: cfg}, nil
}

// Close closes the state database and its ledger.
func (b *Budgets) Close() {
	b.state.Close()
}

// CapsKnown reports whether a config gave the caps; without one, List
// shows caps and what remains as unknown.
func (b *Budgets) CapsKnown() bool { return b.cfg != nil }

// List is every analyst's balance per accounting kind, under the caps the
// firewall applies when a config was given.
func (b *Budgets) List(ctx context.Context) ([]state.Balance, error) {
	var capsFor func(string) state.Caps
	if b.cfg != nil {
		capsFor = state.CapsFrom(b.cfg)
	}
	return b.ledger.List(ctx, capsFor)
}

// Print writes List as a table, saying when the caps are unknown.
func (b *Budgets) Print(ctx context.Context, w io.Writer) error {
	balances, err := b.List(ctx)
	if err != nil {
		return err
	}
	state.WriteTable(w, balances)
	if !b.CapsKnown() && len(balances) > 0 {
		fmt.Fprintln(w, "(caps and what remains come from the config: give --config to see them)")
	}
	return nil
}

// Grant gives analyst extra budget of kind (dp, idp or bdp, any case).
// The analyst must be known (Known).
func (b *Budgets) Grant(ctx context.Context, analyst, kind string, epsilon, delta float64) error {
	if err := b.Known(ctx, analyst); err != nil {
		return err
	}
	return b.ledger.Grant(ctx, analyst, mechanisms.Accounting(strings.ToLower(kind)), epsilon, delta)
}

// Reset clears analyst's spending and grants; the history is kept. The
// analyst must be known (Known).
func (b *Budgets) Reset(ctx context.Context, analyst string) error {
	if err := b.Known(ctx, analyst); err != nil {
		return err
	}
	return b.ledger.Reset(ctx, analyst)
}

// Known refuses an analyst the budgets do not know: one the config does
// not name when a config was given, else one the ledger has no row of. A
// grant or a reset of a mistyped name would otherwise succeed and change
// no one's budget.
func (b *Budgets) Known(ctx context.Context, analyst string) error {
	if b.cfg != nil {
		_, err := b.cfg.Analyst(analyst)
		return err
	}
	balances, err := b.ledger.List(ctx, nil)
	if err != nil {
		return err
	}
	var names []string
	for _, bal := range balances {
		if bal.Analyst == analyst {
			return nil
		}
		if len(names) == 0 || names[len(names)-1] != bal.Analyst {
			names = append(names, bal.Analyst)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("analyst %q has no budget in the state database, which has none yet; give --config to act on an analyst the config names", analyst)
	}
	return fmt.Errorf("analyst %q has no budget in the state database (its analysts: %s); give --config to act on an analyst the config names who has not queried yet",
		analyst, strings.Join(names, ", "))
}

// UseBudgets opens the budgets of the state database at statePath (or of
// the config at configPath), runs use on them and closes them.
func UseBudgets(ctx context.Context, statePath, configPath string, use func(*Budgets) error) error {
	b, err := OpenBudgets(ctx, statePath, configPath)
	if err != nil {
		return err
	}
	defer b.Close()
	return use(b)
}
