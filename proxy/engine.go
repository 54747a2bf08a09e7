// Package proxy holds the Engine, countwall's one entry point: SQL text in,
// a protected answer out. The wire front door (proxy/pgwire) and in-process
// callers (the query and demo commands, the attacks) all go through it.
//
// A query flows parse -> plan -> execute -> mechanism -> ledger -> answer; the
// charge for an answer is committed before the answer is returned.
package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"countwall/config"
	"countwall/mechanisms"
	"countwall/planner"
	"countwall/proxy/statedb"
)

// Engine answers analysts' statements. One Engine serves every session and
// is safe for concurrent use.
type Engine struct {
	store  *planner.Store
	state  *statedb.DB
	secret []byte
	budget Budget
	logger *slog.Logger

	// live is swapped whole on Reload so that a query sees one consistent
	// catalog, mechanism and budget configuration.
	live atomic.Pointer[runtime]

	closeOnce sync.Once
}

// runtime is everything a reload may change.
type runtime struct {
	cfg     *config.Config
	catalog *planner.Catalog
	mech    mechanisms.Mechanism
	float   bool // the mechanism publishes real numbers
}

// Options tune an Engine beyond its config.
type Options struct {
	Logger *slog.Logger
	// Secret, when set, keys record keys and sticky noise in place of the
	// state database's secret: an audit draws a new one per trial, as a new
	// installation would, without creating a state database each time. It
	// must come from a cryptographic source; it is never stored.
	Secret []byte
}

// Open builds an Engine from a validated config: it opens the protected
// database read-only, opens (or creates) the state database, reads the
// protected tables' columns and builds the configured mechanism.
func Open(ctx context.Context, cfg *config.Config, opts Options) (*Engine, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	store, err := planner.OpenStore(cfg.Database, planner.StoreOptions{QueryTimeout: cfg.Server.QueryTimeout})
	if err != nil {
		return nil, fmt.Errorf("opening protected database: %w", err)
	}
	state, err := statedb.Open(ctx, cfg.State)
	if err != nil {
		store.Close()
		return nil, err
	}
	budget, err := openBudget(ctx, state, cfg)
	if err != nil {
		store.Close()
		state.Close()
		return nil, err
	}
	secret := state.Secret()
	if opts.Secret != nil {
		if len(opts.Secret) < statedb.SecretBytes {
			store.Close()
			budget.Close()
			state.Close()
			return nil, fmt.Errorf("the firewall secret must be at least %d bytes", statedb.SecretBytes)
		}
		secret = opts.Secret
	}
	e := &Engine{store: store, state: state, secret: secret, budget: budget, logger: logger}
	rt, err := e.build(ctx, cfg)
	if err != nil {
		e.Close()
		return nil, err
	}
	e.live.Store(rt)
	return e, nil
}

// Reload swaps in a new config for the statements that start after it
// returns; statements already running finish under the old one. The
// protected and state database paths cannot change without a restart. On
// error the old config stays in force.
func (e *Engine) Reload(ctx context.Context, cfg *config.Config) error {
	old := e.live.Load().cfg
	if cfg.Database != old.Database || cfg.State != old.State {
		return errors.New("database and state paths cannot change while running; restart countwall")
	}
	rt, err := e.build(ctx, cfg)
	if err != nil {
		return err
	}
	if err := e.budget.Configure(cfg); err != nil {
		return err
	}
	e.live.Store(rt)
	e.logger.Info("config reloaded", "mechanism", cfg.Mechanism.Name)
	return nil
}

// Mechanism names the mechanism in force.
func (e *Engine) Mechanism() string { return e.live.Load().mech.Name() }

// Config is the config in force.
func (e *Engine) Config() *config.Config { return e.live.Load().cfg }

// Close releases the databases.
func (e *Engine) Close() error {
	var err error
	e.closeOnce.Do(func() {
		err = errors.Join(e.store.Close(), e.budget.Close(), e.state.Close())
	})
	return err
}

// Query runs one statement for an analyst with default session settings.
func (e *Engine) Query(ctx context.Context, analyst, sql string) (*Result, error) {
	return e.NewSession(analyst).Exec(ctx, sql, nil)
}

func (e *Engine) build(ctx context.Context, cfg *config.Config) (*runtime, error) {
	catalog, err := buildCatalog(ctx, e.store, cfg)
	if err != nil {
		return nil, err
	}
	mech, err := mechanisms.New(cfg.Mechanism.Name, mechanisms.Params(cfg.Mechanism.Params),
		mechanisms.Env{Seed: cfg.Seed, Secret: e.secret})
	if err != nil {
		return nil, fmt.Errorf("mechanism %q: %w", cfg.Mechanism.Name, err)
	}
	rt := &runtime{cfg: cfg, catalog: catalog, mech: mech}
	if f, ok := mech.(interface{ FloatOutput() bool }); ok {
		rt.float = f.FloatOutput()
	}
	return rt, nil
}

// buildCatalog reads each configured table's columns from the store and
// attaches the config's privacy unit, domains and policy.
func buildCatalog(ctx context.Context, store *planner.Store, cfg *config.Config) (*planner.Catalog, error) {
	cat := &planner.Catalog{Tables: map[string]*planner.Table{}}
	for name, tc := range cfg.Tables {
		key := "tables." + name
		cols, err := store.Columns(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		byName := map[string]planner.ColumnType{}
		for _, c := range cols {
			byName[strings.ToLower(c.Name)] = c.Type
		}
		if _, ok := byName[tc.PrivacyUnit]; !ok {
			return nil, fmt.Errorf("%s.privacy_unit: column %q is not in table %q (columns: %s)", key, tc.PrivacyUnit, name, strings.Join(sortedNames(byName), ", "))
		}
		queryable := tc.Columns
		if len(queryable) == 0 {
			queryable = sortedNames(byName)
		}
		t := &planner.Table{Name: strings.ToLower(name), PrivacyUnit: tc.PrivacyUnit, Columns: map[string]*planner.Column{}, Policy: tc.Policy}
		for _, c := range queryable {
			typ, ok := byName[c]
			if !ok {
				return nil, fmt.Errorf("%s.columns: column %q is not in table %q", key, c, name)
			}
			t.Columns[c] = &planner.Column{Name: c, Type: typ}
		}
		// The unit column must be known to the planner for COUNT(DISTINCT unit)
		// even when it is not listed as queryable; Policy.UnitInWhere decides
		// whether it may be filtered on.
		if _, ok := t.Columns[tc.PrivacyUnit]; !ok {
			t.Columns[tc.PrivacyUnit] = &planner.Column{Name: tc.PrivacyUnit, Type: byName[tc.PrivacyUnit]}
		}
		for col, d := range tc.Domains {
			c, ok := t.Columns[col]
			if !ok {
				return nil, fmt.Errorf("%s.domains.%s: not a queryable column of table %q", key, col, name)
			}
			if d.IsRange && c.Type != planner.TypeInt {
				return nil, fmt.Errorf("%s.domains.%s: an integer range needs an integer column, but %q is %s", key, col, col, c.Type)
			}
			c.Domain = d
		}
		cat.Tables[t.Name] = t
	}
	return cat, nil
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// fingerprint identifies a statement in logs, the audit log and the ledger
// without keeping its text.
func fingerprint(sql string) string {
	sum := sha256.Sum256([]byte(sql))
	return hex.EncodeToString(sum[:8])
}
