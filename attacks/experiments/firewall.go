package experiments

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"countwall/attacks"
	"countwall/config"
	"countwall/ir"
	"countwall/proxy"
)

// firewall is one deployment of cellkey in front of the protected table,
// with one secret: the noise remover runs once per k against it, each time
// on a fresh connection so that each run's queries are counted alone.
type firewall interface {
	// connect opens a connection; the returned func closes it.
	connect() (attacks.Querier, func(), error)
	Close() error
}

// deployment describes the firewalls of one experiment: the protected
// SQLite file and where their state goes.
type deployment struct {
	dbPath string
	table  string
	unit   string
	column string
	dir    string // state databases and configs
}

// cellkeyParams are the mechanism parameters of Table 3 at bound d.
func cellkeyParams(d int) map[string]any {
	return map[string]any{"ptable": "uniform", "D": d, "suppress_at": 4}
}

// openEngine opens a real Engine on the protected file under secret, with a
// state database of its own (ledger and audit log), as a new installation
// would be: every statement goes through the SQL front door.
func (dep deployment) openEngine(ctx context.Context, d int, name string, secret []byte) (firewall, error) {
	cfg, err := dep.engineConfig(d, name)
	if err != nil {
		return nil, err
	}
	e, err := proxy.Open(ctx, cfg, proxy.Options{Secret: secret})
	if err != nil {
		return nil, fmt.Errorf("opening the firewall for %s: %w", name, err)
	}
	return &engineFirewall{engine: e, state: cfg.State}, nil
}

// engineConfig writes and loads the config of the firewall called name.
func (dep deployment) engineConfig(d int, name string) (*config.Config, error) {
	state := filepath.Join(dep.dir, "state-"+name+".db")
	p := cellkeyParams(d)
	// The state is removed when the run ends (Close), so an fsync per
	// answer would protect nothing: answers' audit rows go to the log
	// without waiting for the disk (audit.sync normal), as they would in a
	// deployment that chose it.
	body := fmt.Sprintf(`database: %q
state: %q
audit: {sync: normal}
mechanism: {name: cellkey}
mechanisms:
  cellkey: {ptable: %v, D: %v, suppress_at: %v}
tables:
  %s:
    privacy_unit: %s
`, dep.dbPath, state, p["ptable"], p["D"], p["suppress_at"], dep.table, dep.unit)
	path := filepath.Join(dep.dir, "countwall-"+name+".yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		return nil, err
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		return nil, fmt.Errorf("the firewall config for %s: %w", name, err)
	}
	return cfg, nil
}

type engineFirewall struct {
	engine *proxy.Engine
	state  string
}

func (f *engineFirewall) connect() (attacks.Querier, func(), error) {
	s := f.engine.NewSession("table3")
	return attacks.InProcess{Session: s}, s.Close, nil
}

// Close closes the Engine and removes its state database: a run's ledger
// and audit log are not wanted after it, and a 20-run table would
// otherwise keep millions of audit entries in the temp dir until the end.
func (f *engineFirewall) Close() error {
	err := f.engine.Close()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if rmErr := os.Remove(f.state + suffix); rmErr != nil && !os.IsNotExist(rmErr) {
			err = errors.Join(err, rmErr)
		}
	}
	return err
}

// openSimulated is an Engine whose backend is the grouped stand-in under
// the same secret: the groups of the column with their counts and
// record-key sums, read once, answered without SQLite. Parsing, the
// mechanism, the ledger and the audit are the Engine's, as in openEngine.
func (dep deployment) openSimulated(ctx context.Context, d int, name string, secret []byte) (firewall, error) {
	cols, groups, err := proxy.GroupsFromSQLite(ctx, dep.dbPath, dep.table, dep.unit, []string{dep.column}, secret)
	if err != nil {
		return nil, err
	}
	cfg, err := dep.engineConfig(d, name)
	if err != nil {
		return nil, err
	}
	e, err := proxy.Open(ctx, cfg, proxy.Options{Secret: secret,
		Grouped: &ir.GroupedTable{Name: dep.table, Unit: dep.unit, Columns: cols, Groups: groups}})
	if err != nil {
		return nil, fmt.Errorf("opening the stand-in firewall for %s: %w", name, err)
	}
	return &engineFirewall{engine: e, state: cfg.State}, nil
}
