package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"countwall/attacks"
	"countwall/attacks/report"
	"countwall/config"
	"countwall/dataset"
	"countwall/proxy"
	"countwall/proxy/pgwire"
)

// demoSetting is one firewall the demo's attack suite runs against: a
// mechanism with its parameters and the budget rules the data owner chose.
type demoSetting struct {
	label     string // as the report card shows it
	mechanism string
	params    map[string]any
	budget    string // the config's budget section
	genomes   bool   // fronts the genomes table (tracing) instead of people
	state     string // a state database to share (bench postgres); "" for a fresh file
}

// The demo's genomes table for the tracing attack: D/N = 16, where one
// reference sample already traces some members and the Theorem 15 variant
// most of them (README, tracing).
const (
	demoGenomesPeople = 100
	demoGenomesSNPs   = 1600
)

// The budget sections of the demo firewalls. A DP firewall keeps shares in a
// sane range and caps each analyst; the IDP and BDP firewalls allow the tiny
// per-query shares their definitions reward, under a cap that looks strict.
const (
	budgetUncounted = "budget:\n  epsilon: {default: 0.1, min: 1.0e-12, max: 1}\n"
	budgetDP        = "budget:\n  epsilon: {default: 0.1, min: 0.01, max: 1}\n  epsilon_cap: 1\n"
	budgetRelaxed   = "budget:\n  epsilon: {default: 1.0e-10, min: 1.0e-12, max: 1}\n  epsilon_cap: 0.001\n  reserve: 1000\n"
)

// demoCellKeyD is the noise bound of the demo's cellkey firewall, which the
// perturbation finder is scored against.
const demoCellKeyD = 2

var demoSettings = map[string]demoSetting{
	"exact":           {label: "exact", mechanism: "exact", budget: budgetUncounted},
	"suppress":        {label: "suppress", mechanism: "suppress", params: map[string]any{"threshold": 10}, budget: budgetUncounted},
	"bounded":         {label: "bounded", mechanism: "bounded", params: map[string]any{"range": 2}, budget: budgetUncounted},
	"cellkey":         {label: "cellkey", mechanism: "cellkey", params: map[string]any{"ptable": "uniform", "D": demoCellKeyD, "suppress_at": 4}, budget: budgetUncounted},
	"layered":         {label: "layered", mechanism: "layered", budget: budgetUncounted},
	"laplace":         {label: "laplace", mechanism: "laplace", budget: budgetDP},
	"cellkey genomes": {label: "cellkey", mechanism: "cellkey", params: map[string]any{"ptable": "uniform", "D": demoCellKeyD, "suppress_at": 4}, budget: budgetUncounted, genomes: true},
	"laplace genomes": {label: "laplace", mechanism: "laplace", budget: budgetDP, genomes: true},
	"idp":             {label: "idp", mechanism: "idp", params: map[string]any{"k": 1}, budget: budgetRelaxed},
	"idp+1":           {label: "idp plus_one", mechanism: "idp", params: map[string]any{"k": 1, "plus_one": true}, budget: budgetRelaxed},
	"bdp":             {label: "bdp", mechanism: "bdp", budget: budgetRelaxed},
}

// demoAttackPlan is which attack the report card runs against which
// firewalls: the mechanism it was built for, a baseline where the paper has
// one, and laplace with a budget, which every one of them should fail against.
var demoAttackPlan = []struct {
	attack   string
	settings []string
}{
	{"differencing", []string{"suppress", "laplace"}},
	{"averaging", []string{"bounded", "laplace"}},
	{"perturbation-finder", []string{"cellkey", "laplace"}},
	{"noise-remover", []string{"cellkey", "laplace"}},
	{"idp-membership", []string{"idp", "laplace"}},
	{"idp-uniqueness", []string{"idp", "laplace"}},
	{"idp-attribute", []string{"idp", "laplace"}},
	{"idp-reconstruct", []string{"idp", "exact", "laplace"}},
	{"idp-variance", []string{"idp+1", "laplace"}},
	{"bdp-existence", []string{"bdp", "laplace"}},
	{"linear-reconstruction", []string{"bounded", "cellkey", "layered", "laplace"}},
	{"prior-release", []string{"laplace"}},
	{"split-averaging", []string{"layered", "laplace"}},
	{"tracing", []string{"cellkey genomes", "laplace genomes"}},
}

// runDemoAttacks runs the attack suite over the wire: for each firewall
// setting a loopback server with SCRAM authentication, one analyst per attack
// (so each starts with a full budget), and the attacks scored against the
// protected database. It prints the report card and writes it as JSON.
func runDemoAttacks(ctx context.Context, dir, dbPath string) ([]report.Row, error) {
	order := []string{}
	bySetting := map[string][]string{}
	for _, p := range demoAttackPlan {
		if _, ok := attacks.Lookup(p.attack); !ok {
			continue
		}
		for _, s := range p.settings {
			if _, seen := bySetting[s]; !seen {
				order = append(order, s)
			}
			bySetting[s] = append(bySetting[s], p.attack)
		}
	}
	results := map[[2]string]report.Row{}
	genomesPath := filepath.Join(dir, "genomes.db")
	for _, name := range order {
		s := demoSettings[name]
		db, tableYAML := dbPath, demoTableYAML()
		if s.genomes {
			if err := demoGenomes(ctx, genomesPath); err != nil {
				return nil, err
			}
			db, tableYAML = genomesPath, dataset.GenomesTable(demoGenomesSNPs).ConfigSnippet()
		}
		srv, err := startDemoServer(ctx, dir, db, tableYAML, s, bySetting[name])
		if err != nil {
			return nil, fmt.Errorf("starting the %s firewall: %w", s.label, err)
		}
		for _, attack := range bySetting[name] {
			results[[2]string{attack, name}] = srv.run(ctx, attack, db)
		}
		srv.stop()
	}
	var rows []report.Row
	for _, p := range demoAttackPlan {
		for _, s := range p.settings {
			if row, ok := results[[2]string{p.attack, s}]; ok {
				rows = append(rows, row)
			}
		}
	}
	return rows, nil
}

// demoServer is a loopback firewall for the attack suite.
type demoServer struct {
	setting   demoSetting
	addr      string
	passwords map[string]string
	engine    *proxy.Engine
	server    *pgwire.Server
}

// demoGenomes writes the genomes table for tracing once per work directory.
func demoGenomes(ctx context.Context, path string) error {
	if _, err := os.Stat(dataset.PopulationPath(path)); err == nil {
		return nil
	}
	return dataset.GenerateGenomes(ctx, path, dataset.GenomesOptions{People: demoGenomesPeople, SNPs: demoGenomesSNPs, Seed: 1}, dataset.WriteOptions{Force: true})
}

func startDemoServer(ctx context.Context, dir, dbPath, tableYAML string, s demoSetting, analysts []string) (*demoServer, error) {
	srv := &demoServer{setting: s, passwords: map[string]string{}}
	var analystYAML strings.Builder
	for _, a := range analysts {
		pw, err := randomPassword()
		if err != nil {
			return nil, err
		}
		v, err := pgwire.NewVerifier(pw, 4096)
		if err != nil {
			return nil, err
		}
		srv.passwords[a] = pw
		fmt.Fprintf(&analystYAML, "  %s: {password: %q}\n", a, v)
	}
	slug := strings.NewReplacer(" ", "-", "+", "-plus").Replace(s.label)
	if s.genomes {
		slug += "-genomes"
	}
	statePath := filepath.Join(dir, "state-attacks-"+slug+".db")
	// Each demo run starts the suite with fresh budgets.
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(statePath + suffix); err != nil && !os.IsNotExist(err) {
			return nil, err
		}
	}
	if s.state != "" {
		statePath = s.state
	}
	body := fmt.Sprintf("database: %s\nstate: %s\n%s%sanalysts:\n%s%s",
		dbPath, statePath, mechanismYAML(s.mechanism, s.params), s.budget, analystYAML.String(), tableYAML)
	path := filepath.Join(dir, "countwall-attacks-"+slug+".yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		return nil, err
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		return nil, err
	}
	srv.engine, err = proxy.Open(ctx, cfg, proxy.Options{})
	if err != nil {
		return nil, err
	}
	srv.server = pgwire.New(func(analyst string) pgwire.Session { return srv.engine.NewSession(analyst) }, pgwire.Options{
		Verifier: func(analyst string) (string, bool) {
			a, ok := srv.engine.Config().Analysts[analyst]
			return a.Password, ok && a.Password != ""
		},
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.engine.Close()
		return nil, err
	}
	srv.addr = l.Addr().String()
	go srv.server.Serve(l) //nolint:errcheck // ends with ErrServerClosed at stop
	return srv, nil
}

func (srv *demoServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.server.Shutdown(ctx) //nolint:errcheck // every client has gone by now
	srv.engine.Close()
}

// run connects as the attack's own analyst, runs it with its demo options
// and scores it.
func (srv *demoServer) run(ctx context.Context, name, truthPath string) report.Row {
	row := report.Row{Attack: name, Mechanism: srv.setting.label}
	a, _ := attacks.Lookup(name)
	o, err := attacks.DemoOptions(name)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	if err := attacks.PrepareDemo(ctx, &o, truthPath); err != nil {
		row.Err = err.Error()
		return row
	}
	o.Progress = terminalProgress(os.Stderr, name+" vs "+srv.setting.label)
	conn, err := srv.dial(ctx, name)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	defer conn.Close()
	res, err := attacks.Execute(ctx, a, &attacks.Logged{Querier: conn}, o, truthPath)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	if name == attacks.PerturbationFinder.Name && srv.setting.mechanism == "cellkey" {
		truth, exact := int64(demoCellKeyD), res.Recovered == demoCellKeyD
		res.Truth, res.Exact = &truth, &exact
	}
	row.Result = res
	return row
}

func randomPassword() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
