// Package proxy holds the Engine, countwall's one entry point: SQL text in,
// a protected answer out. The wire front door (proxy/pgwire) and in-process
// callers (the query and demo commands, the attacks) all go through it.
//
// A query flows parse -> plan -> execute -> mechanism -> ledger -> answer; the
// charge for an answer is committed before the answer is returned.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"countwall/config"
	"countwall/ir"
	"countwall/mechanisms"
	"countwall/planner/plan"
	"countwall/proxy/catalog"
	"countwall/proxy/state"
)

// Engine answers analysts' statements. One Engine serves every session and
// is safe for concurrent use.
type Engine struct {
	store Store
	// backend is what queries read the protected data through: the store,
	// or in tests a stand-in that proves a refused statement never reads.
	backend Backend
	state   *state.DB
	secret  []byte
	budget  *state.Budget
	logger  *slog.Logger
	// noiseSeed is Options.NoiseSeed: tests only.
	noiseSeed int64
	// queueAnswerAudit makes answers' audit entries queued rather than
	// durable, as they were before. Unexported and never set outside the
	// package's benchmark, which measures what durability costs.
	queueAnswerAudit bool

	// live is swapped whole on Reload so that a query sees one consistent
	// catalog, mechanism and budget configuration.
	live atomic.Pointer[runtime]

	// sessions are the open sessions, so that a reload can end those of
	// analysts it removes.
	sessionsMu sync.Mutex
	sessions   map[*Session]struct{}

	// suspended are the analysts the risk monitor suspended (suspend.go).
	suspended sync.Map // analyst -> reason

	// stopRetention ends the audit retention loop (audit_retain.go).
	stopRetention chan struct{}
	retentionDone chan struct{}

	closeOnce sync.Once

	// schema answers clients' schema discovery (pg_catalog and
	// information_schema) from the config's public metadata.
	schema *catalog.Catalog
	// ops is what operations metrics read (operations.go).
	ops operations
}

// runtime is everything a reload may change.
type runtime struct {
	cfg     *config.Config
	catalog *ir.Catalog
	mech    mechanisms.Mechanism
	float   bool // the mechanism publishes real numbers
}

// Options tune an Engine beyond its config.
type Options struct {
	Logger *slog.Logger
	// NoiseSeed, when non-zero, makes the noise mechanisms' fresh randomness
	// reproducible, and so predictable by anyone who knows it. It is for Go
	// tests only: nothing in the config, the environment or the command line
	// sets it, and production noise is always drawn from the operating system.
	NoiseSeed int64
	// Secret, when set, keys record keys and sticky noise in place of the
	// state database's secret: an audit draws a new one per trial, as a new
	// installation would, without creating a state database each time. It
	// must come from a cryptographic source; it is never stored.
	Secret []byte
	// Grouped, when set, is the protected data in place of the database
	// the config names: the stand-in of the papers' experiments, a table
	// held as groups (ir.GroupedTable). Parsing, SET and SHOW, the budget,
	// the audit and the mechanism are the Engine's as ever.
	Grouped *ir.GroupedTable
}

// Open builds an Engine from a validated config: it opens the protected
// database read-only, opens (or creates) the state database, reads the
// protected tables' columns and builds the configured mechanism.
func Open(ctx context.Context, cfg *config.Config, opts Options) (*Engine, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	snapshots := &snapshotStates{}
	store, err := openProtected(cfg, opts, snapshots.wrap(snapshotLogger(logger)))
	if err != nil {
		return nil, fmt.Errorf("opening protected database: %w", err)
	}
	st, err := state.Open(ctx, cfg.State, state.Options{AuditSync: state.AuditSync(cfg.Audit.Sync), Reserve: cfg.Budget.Reserve})
	if err != nil {
		store.Close()
		return nil, err
	}
	budget := state.NewBudget(st.Ledger(), cfg)
	secret := st.Secret()
	if opts.Secret != nil {
		if len(opts.Secret) < state.SecretBytes {
			store.Close()
			budget.Close()
			st.Close()
			return nil, fmt.Errorf("the firewall secret must be at least %d bytes", state.SecretBytes)
		}
		secret = opts.Secret
	}
	e := &Engine{store: store, backend: store, state: st, secret: secret, budget: budget, logger: logger, noiseSeed: opts.NoiseSeed, sessions: map[*Session]struct{}{}}
	e.ops.snapshots = snapshots
	rt, err := e.build(ctx, cfg)
	if err != nil {
		e.Close()
		return nil, err
	}
	e.live.Store(rt)
	e.warnUnraisedCaps(ctx, cfg)
	e.startRetention()
	if err := e.openCatalog(ctx); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Preload reads every configured table into memory before the first
// statement needs it (see planner.Store.Preload); progress and the memory
// each table holds go to the Engine's logger.
func (e *Engine) Preload(ctx context.Context) error {
	return e.preload(ctx, e.live.Load().catalog, nil)
}

// preload reads the catalog's tables into memory, but those skip names.
func (e *Engine) preload(ctx context.Context, cat *ir.Catalog, skip func(name string, t *ir.Table) bool) error {
	p, ok := e.store.(preloader)
	if !ok {
		return nil // PostgreSQL or SQLite alone: nothing is kept in memory
	}
	for _, name := range sortedNames(cat.Tables) {
		if t := cat.Tables[name]; skip == nil || !skip(name, t) {
			if err := p.Preload(ctx, t); err != nil {
				return fmt.Errorf("reading table %q into memory: %w", name, err)
			}
		}
	}
	return nil
}

// Reload swaps in a new config for the statements that start after it
// returns; statements already running finish under the old one. The
// protected and state database paths cannot change without a restart. On
// error the old config stays in force.
//
// Sessions of analysts the new config no longer lists are ended (57P01).
// Caps never rise on a reload: the budget holds each analyst to the lowest
// cap in force since she was first seen, and only a grant adds to it; a
// raise is logged at WARN with the grant that would apply it (as at Open,
// for a restart).
func (e *Engine) Reload(ctx context.Context, cfg *config.Config) error {
	was := e.live.Load()
	old := was.cfg
	if cfg.Database != old.Database || cfg.State != old.State {
		return errors.New("database and state paths cannot change while running; restart countwall")
	}
	if cfg.Audit.Sync != old.Audit.Sync {
		return errors.New("audit.sync cannot change while running; restart countwall")
	}
	rt, err := e.build(ctx, cfg)
	if err != nil {
		return err
	}
	if err := e.budget.Configure(ctx, cfg); err != nil {
		return err
	}
	if err := e.reloadCatalog(ctx, rt.catalog); err != nil {
		return err
	}
	e.live.Store(rt)
	e.warnUnraisedCaps(ctx, cfg)
	e.endRemovedSessions(old, cfg)
	// A table whose privacy unit changed is read again in the new unit's
	// order now, rather than inside the first statement that needs it.
	unchanged := func(name string, t *ir.Table) bool {
		before := was.catalog.Tables[name]
		return before != nil && before.PrivacyUnit == t.PrivacyUnit
	}
	if err := e.preload(ctx, rt.catalog, unchanged); err != nil {
		e.logger.Warn("reading tables into memory after the reload failed; their first statements will read them", "error", err)
	}
	// Not logged here: the caller logs the reload once, with what triggered it.
	return nil
}

// endRemovedSessions ends the open sessions of analysts listed in the old
// config but not in the new one.
func (e *Engine) endRemovedSessions(old, cfg *config.Config) {
	e.sessionsMu.Lock()
	defer e.sessionsMu.Unlock()
	for s := range e.sessions {
		if _, was := old.Analysts[s.analyst]; !was {
			continue
		}
		if _, is := cfg.Analysts[s.analyst]; !is {
			s.end()
			e.logger.Info("session ended: analyst removed from the config", "analyst", s.analyst)
		}
	}
}

// Mechanism names the mechanism in force.
func (e *Engine) Mechanism() string { return e.live.Load().mech.Name() }

// Config is the config in force.
func (e *Engine) Config() *config.Config { return e.live.Load().cfg }

// Close releases the databases.
func (e *Engine) Close() error {
	var err error
	e.closeOnce.Do(func() {
		e.stopRetentionLoop()
		err = errors.Join(e.store.Close(), e.budget.Close(), e.state.Close())
		if e.schema != nil {
			err = errors.Join(err, e.schema.Close())
		}
	})
	return err
}

// Query runs one statement for an analyst with default session settings.
func (e *Engine) Query(ctx context.Context, analyst, sql string) (*Result, error) {
	s := e.NewSession(analyst)
	defer s.Close()
	return s.Exec(ctx, sql, nil)
}

func (e *Engine) build(ctx context.Context, cfg *config.Config) (*runtime, error) {
	catalog, err := buildCatalog(ctx, e.store, cfg)
	if err != nil {
		return nil, err
	}
	mech, err := mechanisms.New(cfg.Mechanism.Name, mechanisms.Params(cfg.Mechanism.Params),
		mechanisms.Env{Seed: e.noiseSeed, Secret: e.secret})
	if err != nil {
		return nil, fmt.Errorf("mechanism %q: %w", cfg.Mechanism.Name, err)
	}
	if err := checkPricedBeforeRead(mech, cfg); err != nil {
		return nil, err
	}
	return &runtime{cfg: cfg, catalog: catalog, mech: mech, float: mechanisms.FloatOutput(mech)}, nil
}

// checkPricedBeforeRead refuses a mechanism that charges a budget but cannot
// price a query before the data is read (it would refuse or charge after
// reading, which one person's rows could then decide), and a default budget
// share the mechanism cannot use (every query would be refused).
func checkPricedBeforeRead(m mechanisms.Mechanism, cfg *config.Config) error {
	if _, ok := m.(mechanisms.Pricer); !ok && mechanisms.Accounts(m) {
		return fmt.Errorf("mechanism %q charges a budget but does not price a query before reading the data (mechanisms.Pricer)", m.Name())
	}
	if mechanisms.ChargesRho(m) {
		if err := checkRhoDeltaCaps(m, cfg); err != nil {
			return err
		}
	}
	if err := mechanisms.CheckShare(m, cfg.Budget.Epsilon.Default, cfg.Budget.Delta.Default); err != nil {
		return fmt.Errorf("budget: the default share (epsilon %g, delta %g) cannot be used by the %s mechanism: %s",
			cfg.Budget.Epsilon.Default, cfg.Budget.Delta.Default, m.Name(), err)
	}
	return nil
}

// maxRhoDeltaCap bounds the delta cap of a mechanism charged in zCDP rho:
// the ledger converts rho to epsilon at the delta cap, and at a delta of 0.5
// or more that epsilon promises nothing (the audit's 25 Gaussian answers
// came to epsilon 2.47 at delta 0.5; at a cap of 1e-5 they are 6.64).
const maxRhoDeltaCap = 0.5

// checkRhoDeltaCaps refuses a delta cap of 0.5 or more, or none, under a
// mechanism charged in rho.
func checkRhoDeltaCaps(m mechanisms.Mechanism, cfg *config.Config) error {
	check := func(key string, c float64) error {
		if c <= 0 || c >= maxRhoDeltaCap {
			return fmt.Errorf("%s: %g: under %s, spending is converted from zCDP to epsilon at the delta cap, and a cap of %g or more (or none) makes that epsilon meaningless; set a delta cap such as 1e-5", key, c, m.Name(), maxRhoDeltaCap)
		}
		return nil
	}
	if err := check("budget.delta_cap", cfg.Budget.DeltaCap); err != nil {
		return err
	}
	for name, a := range cfg.Analysts {
		if a.DeltaCap != 0 {
			if err := check("analysts."+name+".delta_cap", a.DeltaCap); err != nil {
				return err
			}
		}
	}
	return nil
}

// buildCatalog reads each configured table's columns from the store and
// attaches the config's privacy unit, domains and policy.
func buildCatalog(ctx context.Context, store Store, cfg *config.Config) (*ir.Catalog, error) {
	cat := &ir.Catalog{Tables: map[string]*ir.Table{}}
	for name, tc := range cfg.Tables {
		key := "tables." + name
		cols, err := store.Columns(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		byName := map[string]ir.ColumnType{}
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
		t := &ir.Table{Name: strings.ToLower(name), PrivacyUnit: tc.PrivacyUnit, Columns: map[string]*ir.Column{}, Policy: tc.Policy, Bounds: tc.Bounds, UnitKeyed: tc.UnitKeyed}
		for _, c := range queryable {
			typ, ok := byName[c]
			if !ok {
				return nil, fmt.Errorf("%s.columns: column %q is not in table %q", key, c, name)
			}
			t.Columns[c] = &ir.Column{Name: c, Type: typ}
		}
		// The unit column must be known to the planner for COUNT(DISTINCT unit)
		// even when it is not listed as queryable; Policy.UnitInWhere decides
		// whether it may be filtered on.
		if _, ok := t.Columns[tc.PrivacyUnit]; !ok {
			t.Columns[tc.PrivacyUnit] = &ir.Column{Name: tc.PrivacyUnit, Type: byName[tc.PrivacyUnit]}
		}
		for col, d := range tc.Domains {
			c, ok := t.Columns[col]
			if !ok {
				return nil, fmt.Errorf("%s.domains.%s: not a queryable column of table %q", key, col, name)
			}
			if d.IsRange && c.Type != ir.TypeInt {
				return nil, fmt.Errorf("%s.domains.%s: an integer range needs an integer column, but %q is %s", key, col, col, c.Type)
			}
			c.Domain = d
		}
		for col, b := range tc.ValueBounds {
			c, ok := t.Columns[col]
			switch {
			case !ok:
				return nil, fmt.Errorf("%s.bounds.%s: not a queryable column of table %q", key, col, name)
			case c.Type == ir.TypeText:
				return nil, fmt.Errorf("%s.bounds.%s: bounds are for numeric columns, but %q is text", key, col, col)
			}
			c.Bounds = &b
		}
		if t.UnitKeyed {
			if err := store.CheckUnitKeyed(ctx, t); err != nil {
				return nil, fmt.Errorf("%s.unit_keyed: %w", key, err)
			}
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

// snapshotLogger reports the planner's in-memory table snapshots: reading
// progress, the memory each holds, and why a table stays in SQLite.
func snapshotLogger(logger *slog.Logger) func(plan.SnapshotInfo) {
	return func(i plan.SnapshotInfo) {
		switch {
		case i.Err != nil:
			logger.Warn("table left to SQLite", "table", i.Table, "error", i.Err)
		case i.InProgress:
			logger.Info("reading table into memory", "table", i.Table, "rows", i.Rows, "took", i.Took.Round(time.Millisecond))
		default:
			logger.Info("table in memory", "table", i.Table, "rows", i.Rows, "columns", i.Columns,
				"bytes", i.Bytes, "took", i.Took.Round(time.Millisecond))
		}
	}
}

// Fingerprint identifies a statement in logs, the audit log and the ledger
// without keeping its text: keyed with the firewall secret, so that only
// this firewall can compute it.
func (e *Engine) Fingerprint(sql string) string { return e.state.Fingerprint(sql) }

// AuditLog returns the audit entries the filter selects, oldest first, once
// every entry queued so far is written.
func (e *Engine) AuditLog(ctx context.Context, f state.AuditFilter) ([]state.AuditEntry, error) {
	e.state.Flush()
	return e.state.ListAudit(ctx, f)
}
