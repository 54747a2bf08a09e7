package bounding

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"countwall/attacks"
	"countwall/config"
	"countwall/proxy"
)

// deployment is where the experiment's firewalls run: the long table at
// dbPath, their configs and state databases in dir.
type deployment struct {
	dir, dbPath string
	o           Options
}

// firewall is one Engine fronting the long table under one bound.
type firewall struct {
	engine  *proxy.Engine
	session *proxy.Session
	state   string
}

// open starts a firewall whose config declares the long table with C = 1
// and G = g, under laplace at the experiment's epsilon per query, with
// budget for every run.
func (dep deployment) open(ctx context.Context, g int64) (*firewall, error) {
	eps := strconv.FormatFloat(dep.o.Epsilon, 'g', -1, 64)
	capacity := strconv.FormatFloat(2*float64(dep.o.Runs)*dep.o.Epsilon, 'g', -1, 64)
	state := filepath.Join(dep.dir, fmt.Sprintf("state-bounds-g%d.db", g))
	// The state is removed when the firewall closes: an fsync per answer
	// would protect nothing (audit.sync normal).
	body := fmt.Sprintf(`database: %q
state: %q
audit: {sync: normal}
mechanism: {name: laplace}
budget:
  epsilon: {default: %s, min: %s, max: %s}
  epsilon_cap: %s
tables:
  genomes:
    privacy_unit: person
    max_rows_per_unit: 1
    max_groups_per_unit: %d
    policy: {max_groups: %d}
    domains:
      snp: {min: 0, max: %d}
`, dep.dbPath, state, eps, eps, eps, capacity, g, max(dep.o.Attributes, 10000), dep.o.Attributes-1)
	path := filepath.Join(dep.dir, fmt.Sprintf("countwall-bounds-g%d.yaml", g))
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		return nil, err
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		return nil, fmt.Errorf("the firewall config: %w", err)
	}
	e, err := proxy.Open(ctx, cfg, proxy.Options{NoiseSeed: dep.o.noiseSeed})
	if err != nil {
		return nil, fmt.Errorf("opening the firewall: %w", err)
	}
	return &firewall{engine: e, session: e.NewSession("bounds"), state: state}, nil
}

// connect is the firewall's one session as a Querier.
func (f *firewall) connect() attacks.Querier { return attacks.InProcess{Session: f.session} }

// close ends the session and the Engine and removes its state database:
// the ledger and audit of a measurement are not wanted after it.
func (f *firewall) close() error {
	f.session.Close()
	err := f.engine.Close()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if rmErr := os.Remove(f.state + suffix); rmErr != nil && !os.IsNotExist(rmErr) {
			err = errors.Join(err, rmErr)
		}
	}
	return err
}

// boundsLine is EXPLAIN's statement of the bounds in force.
// C's statement carries where C came from and what it leaves out, before G.
var boundsLine = regexp.MustCompile(`C = (\d+) rows? of a person per cell.*?G = (\d+) cell\(s\) per person`)

// boundsInForce asks the firewall, with EXPLAIN, which bounds it will
// enforce on the marginal: G is lowered to the number of cells when that is
// smaller, and the noise scale follows the bounds in force.
func boundsInForce(ctx context.Context, q attacks.Querier) (g, c int64, err error) {
	plan, err := q.Query(ctx, "EXPLAIN "+marginal)
	if err != nil {
		return 0, 0, err
	}
	for _, row := range plan.Values {
		for _, v := range row {
			if m := boundsLine.FindStringSubmatch(v); m != nil {
				if c, err = strconv.ParseInt(m[1], 10, 64); err == nil {
					g, err = strconv.ParseInt(m[2], 10, 64)
				}
				return g, c, err
			}
		}
	}
	return 0, 0, fmt.Errorf("EXPLAIN states no contribution bounds: %v", plan.Values)
}
