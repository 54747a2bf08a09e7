package audit

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"countwall/attacks"
	"countwall/config"
	"countwall/dataset"
	"countwall/proxy"
	"countwall/proxy/state"
)

// Mechanism is a mechanism as the audit deploys it: its name, parameters
// and the per-query budget share its analysts are charged.
type Mechanism struct {
	Label  string // as reported (defaults to Name)
	Name   string
	Params map[string]any
	// Epsilon and Delta are the per-query share (budget.epsilon/delta
	// default); ignored by mechanisms that charge nothing.
	Epsilon, Delta float64
	// Sticky mechanisms key their noise with the firewall secret, so every
	// trial needs a deployment with a new secret.
	Sticky bool
}

// EngineDeployer deploys a mechanism as an in-process Engine on one of two
// neighbouring databases. Every deployment draws a new firewall secret from
// crypto/rand, as a new installation would; the state database (ledger and
// audit log) is shared by the deployments of one world, each trial's
// analysts having names of their own.
type EngineDeployer struct {
	Dir       string    // where configs and state files go
	Databases [2]string // indexed by World
	Mechanism Mechanism

	configs [2]*config.Config
}

// Deploy opens an Engine on world w under a new secret.
func (d *EngineDeployer) Deploy(ctx context.Context, w World) (Deployment, error) {
	if d.configs[w] == nil {
		cfg, err := d.load(w)
		if err != nil {
			return nil, err
		}
		d.configs[w] = cfg
	}
	secret := make([]byte, state.SecretBytes)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	e, err := proxy.Open(ctx, d.configs[w], proxy.Options{Secret: secret})
	if err != nil {
		return nil, fmt.Errorf("deploying %s on the table %s the person: %w", d.Mechanism.label(), w, err)
	}
	return &engineDeployment{engine: e}, nil
}

func (m Mechanism) label() string {
	if m.Label != "" {
		return m.Label
	}
	return m.Name
}

// load writes and reads the config for world w.
func (d *EngineDeployer) load(w World) (*config.Config, error) {
	m := d.Mechanism
	var b strings.Builder
	state := filepath.Join(d.Dir, fmt.Sprintf("state-%s-%s.db", m.label(), w))
	fmt.Fprintf(&b, "database: %q\nstate: %q\nmechanism:\n  name: %s\n", d.Databases[w], state, m.Name)
	if len(m.Params) > 0 {
		keys := make([]string, 0, len(m.Params))
		for k := range m.Params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s: %v", k, m.Params[k])
		}
		fmt.Fprintf(&b, "mechanisms:\n  %s: {%s}\n", m.Name, strings.Join(parts, ", "))
	}
	eps, delta := m.Epsilon, m.Delta
	if eps == 0 {
		eps = 0.1
	}
	// An epsilon cap no audit reaches: the audit measures a test's loss,
	// not how a cap limits it. The delta cap is a real one: gaussian's zCDP
	// spending is converted to epsilon at it, and the claim is measured at
	// that delta.
	fmt.Fprintf(&b, "budget:\n  epsilon: {default: %g, min: %g, max: %g}\n  delta: {default: %g, min: 0, max: %g}\n  epsilon_cap: 1.0e+12\n  delta_cap: %g\n  reserve: 1000\n",
		eps, eps, eps, delta, max(delta, 1e-3), auditDeltaCap)
	b.WriteString(dataset.NeighboursTable().ConfigSnippet())
	path := filepath.Join(d.Dir, fmt.Sprintf("countwall-%s-%s.yaml", m.label(), w))
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return nil, err
	}
	return config.Load(path, nil)
}

// auditDeltaCap is the delta cap of the audit's deployments: gaussian's
// claims are epsilon at this delta.
const auditDeltaCap = 1e-5

type engineDeployment struct{ engine *proxy.Engine }

func (e *engineDeployment) Session(analyst string) attacks.Querier {
	return attacks.InProcess{Session: e.engine.NewSession(analyst)}
}

func (e *engineDeployment) Close() error { return e.engine.Close() }

// Standard are the mechanisms `countwall audit` measures by default, with the
// demo's parameters; accounting mechanisms are charged epsilon (and the
// Gaussian delta) per query, the relaxations the tiny share they reward.
func Standard(epsilon, delta float64) []Mechanism {
	return []Mechanism{
		{Name: "exact"},
		{Name: "suppress", Params: map[string]any{"threshold": 10}},
		{Name: "bounded", Params: map[string]any{"range": 2}},
		{Name: "cellkey", Params: map[string]any{"ptable": "uniform", "D": 2, "suppress_at": 4}, Sticky: true},
		{Name: "layered", Sticky: true},
		{Name: "laplace", Epsilon: epsilon},
		{Name: "gaussian", Epsilon: epsilon, Delta: delta},
		{Name: "idp", Params: map[string]any{"k": 1}, Epsilon: 1e-10},
		{Name: "bdp", Epsilon: 1e-10},
	}
}
