package attacks_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"countwall/attacks"
	"countwall/config"
	"countwall/ir"
	"countwall/proxy"
)

// standIn is a session of an Engine in process whose backend is the grouped
// stand-in over tbl (planner/grouped): the Engine's parser, SET, SHOW,
// budget, audit and mechanism, without a pass over a table per query. seed
// makes the mechanism's fresh noise reproducible (0: fresh noise). Every
// statement sent is counted, session statements included.
type standIn struct {
	q attacks.InProcess
	n int
}

func (s *standIn) Query(ctx context.Context, sql string) (*attacks.Rows, error) {
	s.n++
	return s.q.Query(ctx, sql)
}

// Queries is how many statements the stand-in has been sent.
func (s *standIn) Queries() int { return s.n }

// openStandIn opens the stand-in over tbl answering through mechanism with
// params. The budget is wide (an epsilon share of 1e-10 by default, caps of
// 1e6) so that statistical tests of millions of queries never exhaust it;
// tests of the caps use the SQLite fixtures.
func openStandIn(t testing.TB, tbl ir.GroupedTable, mechanism string, params map[string]any, seed int64) *standIn {
	t.Helper()
	return openStandInWith(t, tbl, mechanism, params, proxy.Options{NoiseSeed: seed})
}

// openStandInWith is openStandIn with the Engine's options (a fixed
// secret, say); opts.Grouped is tbl.
func openStandInWith(t testing.TB, tbl ir.GroupedTable, mechanism string, params map[string]any, opts proxy.Options) *standIn {
	t.Helper()
	dir := t.TempDir()
	unit := tbl.Unit
	if unit == "" {
		unit = "_unit"
	}
	body := fmt.Sprintf(`database: stand-in
state: %q
audit: {sync: normal}
mechanism: {name: %s}
budget:
  epsilon: {default: 1.0e-10, min: 1.0e-12, max: 10}
  epsilon_cap: 1.0e6
  delta_cap: 1.0e-5
  reserve: 100000
tables:
  %s:
    privacy_unit: %s
`, filepath.Join(dir, "state.db"), mechanism, tbl.Name, unit)
	path := filepath.Join(dir, "countwall.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Mechanism.Params = params
	opts.Grouped = &tbl
	e, err := proxy.Open(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	s := e.NewSession("analyst")
	t.Cleanup(func() {
		s.Close()
		e.Close()
	})
	return &standIn{q: attacks.InProcess{Session: s}}
}
