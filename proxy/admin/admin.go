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
func (b *Budgets) Grant(ctx context.Context, analyst, kind string, epsilon, delta float64) error {
	return b.ledger.Grant(ctx, analyst, mechanisms.Accounting(strings.ToLower(kind)), epsilon, delta)
}

// Reset clears analyst's spending and grants; the history is kept.
func (b *Budgets) Reset(ctx context.Context, analyst string) error {
	return b.ledger.Reset(ctx, analyst)
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
