package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"countwall/attacks"
	"countwall/attacks/report"
	"countwall/dataset"
	"countwall/proxy"
	"countwall/proxy/pgwire"
	"countwall/proxy/server"
)

// Setting is one firewall the demo's attack suite runs against: a
// mechanism with its parameters and the budget rules the data owner chose.
type Setting struct {
	Label     string // as the report card shows it
	Mechanism string
	Params    map[string]any
	Budget    map[string]any // the config's budget section
	Genomes   bool           // fronts the genomes table (tracing) instead of people
	// State, when set, is a state database several firewalls share (the
	// PostgreSQL bench's instances); otherwise each starts a fresh file.
	State string
	// AuditSync is the config's audit.sync ("" is its default, full).
	AuditSync string
}

// The demo's genomes table for the tracing attack: D/N = 16, where one
// reference sample already traces some members and the Theorem 15 variant
// most of them (docs/attacks.md, tracing).
const (
	genomesPeople = 100
	genomesSNPs   = 1600
)

// epsilonRange is a budget section's per-query epsilon: default and the
// range an analyst may SET.
func epsilonRange(def, lo, hi float64) map[string]any {
	return map[string]any{"default": def, "min": lo, "max": hi}
}

// The budget sections of the demo firewalls. A DP firewall keeps shares in a
// sane range and caps each analyst; the IDP and BDP firewalls allow the tiny
// per-query shares their definitions reward, under a cap that looks strict.
var (
	budgetUncounted = map[string]any{"epsilon": epsilonRange(0.1, 1e-12, 1)}
	budgetDP        = map[string]any{"epsilon": epsilonRange(0.1, 0.01, 1), "epsilon_cap": 1}
	budgetRelaxed   = map[string]any{"epsilon": epsilonRange(1e-10, 1e-12, 1), "epsilon_cap": 0.001, "reserve": 1000}
)

// cellKeyD is the noise bound of the demo's cellkey firewall, which the
// perturbation finder is scored against.
const cellKeyD = 2

// suppressParams are the demo's suppress firewall's rules, the magnitude
// rules for sums stated as a statistical office would set them: the p%
// rule withholds the students' cell that sum-differencing recovers.
var suppressParams = map[string]any{"threshold": 10, "p_percent": 10, "dominance_n": 2, "dominance_k": 85, "secondary_suppression": true}

// Settings are the demo's firewalls by name.
var Settings = map[string]Setting{
	"exact":           {Label: "exact", Mechanism: "exact", Budget: budgetUncounted},
	"exact release":   {Label: "exact release", Mechanism: "exact", Budget: budgetUncounted},
	"suppress":        {Label: "suppress", Mechanism: "suppress", Params: suppressParams, Budget: budgetUncounted},
	"bounded":         {Label: "bounded", Mechanism: "bounded", Params: map[string]any{"range": 2}, Budget: budgetUncounted},
	"cellkey":         {Label: "cellkey", Mechanism: "cellkey", Params: map[string]any{"ptable": "uniform", "D": cellKeyD, "suppress_at": 4}, Budget: budgetUncounted},
	"layered":         {Label: "layered", Mechanism: "layered", Budget: budgetUncounted},
	"laplace":         {Label: "laplace", Mechanism: "laplace", Budget: budgetDP},
	"cellkey genomes": {Label: "cellkey", Mechanism: "cellkey", Params: map[string]any{"ptable": "uniform", "D": cellKeyD, "suppress_at": 4}, Budget: budgetUncounted, Genomes: true},
	"laplace genomes": {Label: "laplace", Mechanism: "laplace", Budget: budgetDP, Genomes: true},
	"idp":             {Label: "idp", Mechanism: "idp", Params: map[string]any{"k": 1}, Budget: budgetRelaxed},
	"idp+1":           {Label: "idp plus_one", Mechanism: "idp", Params: map[string]any{"k": 1, "plus_one": true}, Budget: budgetRelaxed},
	"bdp":             {Label: "bdp", Mechanism: "bdp", Budget: budgetRelaxed},
}

// AttackPlan is which attack the report card runs against which
// firewalls: the mechanism it was built for, a baseline where the paper has
// one, and laplace with a budget, which every one of them should fail against.
var AttackPlan = []struct {
	Attack   string
	Settings []string
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
	{"sum-differencing", []string{"suppress", "laplace"}},
	{"sum-averaging", []string{"bounded", "cellkey", "laplace"}},
	{"sum-split-averaging", []string{"layered", "laplace"}},
	{"tracing", []string{"cellkey genomes", "laplace genomes"}},
}

// publisher is the analyst the exact release firewall answers the
// prior-release attack's pair counts: the earlier release it combines.
const publisher = "publisher"

// riskPending is a firewall whose state audit risk reads once the suite is
// over (and the release firewall stopped).
type riskPending struct {
	label, statePath, truthPath string
	plusOne, prior              bool
}

// planned is the settings of the attack plan in order of first use, and
// the attacks each runs.
func planned() ([]string, map[string][]string) {
	var order []string
	bySetting := map[string][]string{}
	for _, p := range AttackPlan {
		if _, ok := attacks.Lookup(p.Attack); !ok {
			continue
		}
		for _, s := range p.Settings {
			if _, seen := bySetting[s]; !seen {
				order = append(order, s)
			}
			bySetting[s] = append(bySetting[s], p.Attack)
		}
	}
	return order, bySetting
}

// assessPending reads what the (stopped) release firewall published and
// runs audit risk on each firewall's state, with the published release
// where the prior-release attack ran.
func assessPending(ctx context.Context, pending []riskPending, release *Firewall) ([]report.RiskRun, *published, error) {
	var pub *published
	if release != nil {
		var err error
		if pub, err = readPublished(ctx, release.setting.Label, release.StatePath, publisher); err != nil {
			return nil, nil, fmt.Errorf("reading the exact release firewall's audit: %w", err)
		}
	}
	runs, err := assessStates(ctx, pending, pub)
	return runs, pub, err
}

// writeGenomes writes the genomes table for tracing once per work directory.
func writeGenomes(ctx context.Context, path string) error {
	if _, err := os.Stat(dataset.PopulationPath(path)); err == nil {
		return nil
	}
	return dataset.GenerateGenomes(ctx, path, dataset.GenomesOptions{People: genomesPeople, SNPs: genomesSNPs, Seed: 1}, dataset.WriteOptions{Force: true})
}

// Firewall is a loopback firewall for the attack suite and the bench, with
// one analyst per name, each with a random password.
type Firewall struct {
	*server.Loopback
	setting   Setting
	passwords map[string]string
	// StatePath is the firewall's state database.
	StatePath string
	// configPath is the config file the firewall runs (absolute when dir is).
	configPath string
	// release, when set, is the exact release firewall the prior-release
	// attack asks its earlier release of, as publisher.
	release *Firewall
}

// StartFirewall writes the config of setting s in dir, fronting dbPath with
// the given tables section and a fresh state database, reads the tables into
// memory and serves them on a loopback port until Stop.
func StartFirewall(ctx context.Context, dir, dbPath string, tableSection map[string]any, s Setting, analysts []string) (*Firewall, error) {
	fw := &Firewall{setting: s, passwords: map[string]string{}}
	accounts := map[string]map[string]string{}
	for _, a := range analysts {
		pw, err := randomPassword()
		if err != nil {
			return nil, err
		}
		v, err := pgwire.NewVerifier(pw, 4096)
		if err != nil {
			return nil, err
		}
		fw.passwords[a] = pw
		accounts[a] = map[string]string{"password": v}
	}
	slug := strings.NewReplacer(" ", "-", "+", "-plus").Replace(s.Label)
	if s.Genomes {
		slug += "-genomes"
	}
	statePath := s.State
	if statePath == "" {
		statePath = filepath.Join(dir, "state-attacks-"+slug+".db")
		// Each demo run starts the suite with fresh budgets.
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if err := os.Remove(statePath + suffix); err != nil && !os.IsNotExist(err) {
				return nil, err
			}
		}
	}
	fw.StatePath = statePath
	fw.configPath = filepath.Join(dir, "countwall-attacks-"+slug+".yaml")
	cfg, err := writeConfig(fw.configPath, configFile{
		Database:   dbPath,
		State:      statePath,
		Audit:      auditSection{Sync: s.AuditSync},
		Mechanism:  mechanismName{s.Mechanism},
		Mechanisms: mechanismParams(s.Mechanism, s.Params),
		Budget:     s.Budget,
		Analysts:   accounts,
		Tables:     tableSection,
	})
	if err != nil {
		return nil, err
	}
	engine, err := proxy.Open(ctx, cfg, proxy.Options{})
	if err != nil {
		return nil, err
	}
	// As serve does, the tables are read into memory before the first
	// analyst connects: a large table's read would otherwise fall inside the
	// first statement and its query_timeout.
	if err := engine.Preload(ctx); err != nil {
		engine.Close()
		return nil, err
	}
	if fw.Loopback, err = server.StartLoopback(engine); err != nil {
		engine.Close()
		return nil, err
	}
	return fw, nil
}

// run connects as the attack's own analyst, runs it with its demo options
// and scores it.
func (fw *Firewall) run(ctx context.Context, name, truthPath string, progress func(done, total int)) report.Row {
	row := report.Row{Attack: name, Mechanism: fw.setting.Label}
	a, _ := attacks.Lookup(name)
	o, err := attacks.DemoOptions(name)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	if p, ok := o.Params.(*attacks.PriorReleaseParams); ok && fw.release != nil {
		p.ReleaseDSN, o.Connect = fw.release.dsn(publisher), dialWire
	}
	if err := attacks.PrepareDemo(ctx, &o, truthPath); err != nil {
		row.Err = err.Error()
		return row
	}
	o.Progress, o.Pipeline = progress, pipelineDepth(fw.setting)
	conn, err := fw.Dial(ctx, name)
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
	res.Reach = &attacks.Reach{Transport: attacks.TransportWire, Server: fw.Addr + "/countwall", Config: fw.configPath, Table: o.Target.Table}
	if name == attacks.PerturbationFinder.Name && fw.setting.Mechanism == "cellkey" {
		truth, exact := int64(cellKeyD), res.Recovered == cellKeyD
		res.Truth, res.Exact = &truth, &exact
	}
	row.Result = res
	return row
}

// pipelineDepth is how many statements the demo's attacks keep in flight
// on their connection to a firewall of setting s (attacks.Options.Pipeline):
// the attack command's default, except where the budget's cap stops an
// attack after a few answers (laplace's ten). There a batch would carry
// statements past the refusal, which the card would count as sent and
// refused, and the few answers have no round trips worth saving.
func pipelineDepth(s Setting) int {
	def, _ := s.Budget["epsilon"].(map[string]any)["default"].(float64)
	capped, ok := s.Budget["epsilon_cap"]
	if !ok || def <= 0 {
		return attacks.DefaultPipeline
	}
	var limit float64
	switch c := capped.(type) {
	case int:
		limit = float64(c)
	case float64:
		limit = c
	}
	if limit/def < minPipelinedAnswers {
		return 1
	}
	return attacks.DefaultPipeline
}

// minPipelinedAnswers is how many answers a budget must pay for before the
// demo's attacks pipeline their statements under it: more than any attack
// of the plan sends.
const minPipelinedAnswers = 1e6

// Dial connects to the firewall as analyst over SCRAM.
func (fw *Firewall) Dial(ctx context.Context, analyst string) (*attacks.Wire, error) {
	return attacks.Dial(ctx, fw.dsn(analyst))
}

// dsn is the URL analyst connects with.
func (fw *Firewall) dsn(analyst string) string {
	return (&url.URL{Scheme: "postgres", User: url.UserPassword(analyst, fw.passwords[analyst]), Host: fw.Addr,
		Path: "/countwall", RawQuery: "sslmode=disable"}).String()
}

// dialWire is an attack's Connect: it reaches a second firewall by its URL.
func dialWire(ctx context.Context, dsn, _ string) (attacks.Querier, func(), error) {
	w, err := attacks.Dial(ctx, dsn)
	if err != nil {
		return nil, nil, err
	}
	return w, func() { w.Close() }, nil
}

func randomPassword() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
