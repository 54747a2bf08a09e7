package audit

import (
	"context"
	"io"

	"github.com/spf13/pflag"

	"countwall/config"
	"countwall/internal/workdir"
)

// Command is `countwall audit`: the standard mechanisms on neighbouring
// tables it writes, or with ConfigPath the firewall a config deploys, on
// neighbours of its own table.
type Command struct {
	Suite          SuiteOptions
	Mechanisms     []string // audit only these (all when empty)
	Epsilon, Delta float64  // per query, for the standard mechanisms
	JSON           string   // also write the report here
	Dir            string   // keep the neighbours here (a temporary directory when empty)
	ConfigPath     string
	Table          string // with ConfigPath: the audited table
	UnitIndex      int64  // with ConfigPath: the audited unit
	// With ConfigPath: the timed tests' statements per world, the groups
	// edge's distinct values and samples, extra switch points, the edges
	// to audit, the seed of the timed statements' order.
	TimeTrials  int
	TimeBlock   int
	GroupLimit  int64
	GroupTrials int
	SwitchRows  []int64
	Edges       []string
	Seed        uint64
}

// AddFlags defines the command's flags on f.
func (c *Command) AddFlags(f *pflag.FlagSet) {
	f.StringSliceVar(&c.Mechanisms, "mechanism", nil, "audit only these mechanisms (repeatable; default all)")
	f.IntVar(&c.Suite.Trials, "trials", 1000, "trials per database and test")
	f.Float64Var(&c.Suite.Confidence, "confidence", 0.95, "joint confidence of the bounds")
	f.Float64Var(&c.Epsilon, "epsilon", 1, "per-query epsilon of laplace and gaussian (idp and bdp get the 1e-10 they reward)")
	f.Float64Var(&c.Delta, "delta", 1e-5, "per-query delta of gaussian")
	f.Int64Var(&c.Suite.Rows, "rows", 200, "people in the audited table")
	f.IntVar(&c.Suite.CellRows, "cell", 20, "people sharing the audited person's cell")
	f.StringVar(&c.JSON, "json", "", "also write the audit as JSON (for 'attack report --html --audit')")
	f.StringVar(&c.Dir, "dir", "", "keep the neighbouring databases and configs in this directory")
	f.StringVar(&c.ConfigPath, "config", "", "audit the firewall this config deploys, on neighbours of its own table (its mechanism, parameters, shares, delta cap and bounds)")
	f.StringVar(&c.Table, "table", "", "with --config: the table to audit (the config's only one by default)")
	f.Int64Var(&c.UnitIndex, "unit-index", 0, "with --config: audit the n-th privacy unit in the unit column's order")
	f.IntVar(&c.TimeTrials, "time-trials", 5000, "with --config: statements per world of each timed test, the two worlds alternating")
	f.IntVar(&c.TimeBlock, "time-block", DefaultTimeBlock, "with --config: timed statements per world from one deployment (both worlds are deployed afresh for each block)")
	f.Int64Var(&c.GroupLimit, "group-limit", 1_000_000, "with --config: distinct values of the groups edge's column without the person (0: no groups edge)")
	f.IntVar(&c.GroupTrials, "group-trials", 100, "with --config: samples per world of every test on the groups edge")
	f.Int64SliceVar(&c.SwitchRows, "switch-rows", nil, "with --config: also audit a value held by this many rows (repeatable)")
	f.StringSliceVar(&c.Edges, "edge", nil, "with --config: audit only these neighbours (repeatable; default all): control, removed, several-rows, other-storage, invalid-utf8, blob, real-in-integer, text-in-integer, real-unit, switch, switch-N, math, groups")
	f.Uint64Var(&c.Seed, "seed", 1, "with --config: seed of the order of each pair of timed statements")
}

// Run audits, prints the report to w and saves it as JSON when asked;
// progress, when set, is told each mechanism's trials.
func (c *Command) Run(ctx context.Context, w io.Writer, progress func(label string) func(done, total int)) error {
	var cfg *config.Config
	var mechs []Mechanism
	var err error
	if c.ConfigPath != "" {
		cfg, err = config.Load(c.ConfigPath, nil)
	} else {
		mechs, err = StandardNamed(c.Mechanisms, c.Epsilon, c.Delta)
	}
	if err != nil {
		return err
	}
	return workdir.In(c.Dir, "countwall-audit-", func(dir string) error {
		var rep *Report
		if cfg != nil {
			rep, err = RunDeployed(ctx, DeployedOptions{Config: cfg, Table: c.Table, Mechanisms: c.Mechanisms, UnitIndex: c.UnitIndex,
				Dir: dir, Trials: c.Suite.Trials, Confidence: c.Suite.Confidence, Progress: progress,
				TimeTrials: c.TimeTrials, TimeBlock: c.TimeBlock, GroupLimit: c.GroupLimit, GroupTrials: c.GroupTrials, SwitchRows: c.SwitchRows, Edges: c.Edges, Seed: c.Seed})
			if err == nil {
				NameDeployment(rep, c.ConfigPath, c.Table, cfg)
			}
		} else {
			o := c.Suite
			o.Dir, o.Mechanisms, o.Progress = dir, mechs, progress
			rep, err = RunSuite(ctx, o)
		}
		if err != nil {
			return err
		}
		return Output(w, rep, c.JSON)
	})
}
