package admin

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"countwall/proxy/state"
)

// newState makes a state database whose ledger knows analyst alice.
func newState(t *testing.T, dir string) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(dir, "state.db")
	st, err := state.Open(ctx, path, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, err := state.OpenLedger(ctx, st.SQL(), state.LedgerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	if err := l.Grant(ctx, "alice", "dp", 0.5, 0); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenStateRefuses(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, state, config, want string
	}{
		{"neither flag", "", "", "--state or --config is required"},
		{"no such state database", filepath.Join(dir, "missing.db"), "", "no state database at " + filepath.Join(dir, "missing.db")},
		{"no such config", "", filepath.Join(dir, "missing.yaml"), "missing.yaml"},
	}
	for _, tt := range tests {
		st, _, err := OpenState(context.Background(), tt.state, tt.config)
		if err == nil {
			st.Close()
			t.Errorf("%s: opened", tt.name)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want it to say %q", tt.name, err, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Error("a missing state database was created")
	}
}

// The caps come from the config (the analyst's own, else the budget
// section's) plus grants; without a config they are unknown (NaN).
func TestBudgetsListGrantReset(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	state := newState(t, dir)
	cfgPath := filepath.Join(dir, "countwall.yaml")
	body := "database: protected.db\nstate: " + state + "\nbudget:\n  epsilon_cap: 1\nanalysts:\n  alice: {epsilon_cap: 2}\n  bob: {}\n" +
		"tables:\n  people:\n    privacy_unit: id\n    columns: [id]\n"
	if err := os.WriteFile(cfgPath, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := OpenBudgets(ctx, "", cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !b.CapsKnown() {
		t.Error("a config was given, yet the caps are unknown")
	}
	if err := b.Grant(ctx, "bob", "DP", 0.25, 0); err != nil {
		t.Fatal(err)
	}
	caps := func(b *Budgets) map[string]float64 {
		t.Helper()
		balances, err := b.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, bal := range balances {
			out[bal.Analyst+" "+string(bal.Kind)] = bal.EpsilonCap
		}
		return out
	}
	got := caps(b)
	if got["alice dp"] != 2.5 || got["bob dp"] != 1.25 {
		t.Errorf("epsilon caps with grants: %v, want alice dp 2.5 and bob dp 1.25", got)
	}
	if err := b.Reset(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if got := caps(b); got["bob dp"] != 1.25 {
		t.Errorf("resetting alice changed bob: %v", got)
	} else if c, ok := got["alice dp"]; ok {
		t.Errorf("after reset, alice still has a dp row (cap %v); nothing is spent or granted", c)
	}

	noConfig, err := OpenBudgets(ctx, state, "")
	if err != nil {
		t.Fatal(err)
	}
	defer noConfig.Close()
	if noConfig.CapsKnown() {
		t.Error("caps known without a config")
	}
	for k, c := range caps(noConfig) {
		if !math.IsNaN(c) {
			t.Errorf("%s: cap %v without a config, want NaN", k, c)
		}
	}
}

// An analyst neither the config (when given) nor else the ledger knows is
// refused by grant and reset, naming the analysts it does know.
func TestBudgetsRefuseUnknownAnalysts(t *testing.T) {
	tests := []struct {
		name          string
		config        bool
		analyst, want string
	}{
		{"configured", true, "carol", ""},
		{"not configured", true, "mallory", `analyst "mallory" is not in the config; its analysts: bob, carol`},
		{"in the ledger, not in the config", true, "alice", `analyst "alice" is not in the config; its analysts: bob, carol`},
		{"in the ledger", false, "alice", ""},
		{"not in the ledger", false, "mallory", `analyst "mallory" has no budget in the state database (its analysts: alice); give --config`},
	}
	for _, tt := range tests {
		for _, op := range []string{"grant", "reset"} {
			t.Run(tt.name+" "+op, func(t *testing.T) {
				b := budgetsOf(t, tt.config)
				var err error
				if op == "grant" {
					err = b.Grant(context.Background(), tt.analyst, "dp", 0.1, 0)
				} else {
					err = b.Reset(context.Background(), tt.analyst)
				}
				if tt.want == "" && err != nil {
					t.Error(err)
				}
				if tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)) {
					t.Errorf("%v, want %q", err, tt.want)
				}
			})
		}
	}
}

// budgetsOf opens the budgets of a new state whose ledger knows alice,
// through a config naming bob and carol when config is set.
func budgetsOf(t *testing.T, config bool) *Budgets {
	t.Helper()
	dir := t.TempDir()
	state, cfgPath := newState(t, dir), ""
	if config {
		cfgPath = filepath.Join(dir, "countwall.yaml")
		body := "database: protected.db\nstate: " + state + "\nanalysts:\n  bob: {}\n  carol: {}\n" +
			"tables:\n  people:\n    privacy_unit: id\n    columns: [id]\n"
		if err := os.WriteFile(cfgPath, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		state = ""
	}
	b, err := OpenBudgets(context.Background(), state, cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}
