package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"countwall/config"
	"countwall/dataset"
)

// SuiteOptions say how a whole audit runs.
type SuiteOptions struct {
	Dir        string // a working directory for the neighbouring databases and state
	Rows       int64  // people in the table without the audited person
	CellRows   int    // people sharing the audited person's cell
	Trials     int
	Confidence float64
	Mechanisms []Mechanism
	// Progress, when set, gets a line per mechanism and is told the trials done.
	Progress func(mechanism string) func(done, total int)
}

// Report is an audit of several mechanisms, as `countwall audit --json`
// writes it and the HTML report card reads it.
type Report struct {
	Trials     int       `json:"trials"`
	TimeTrials int       `json:"time_trials,omitempty"` // statements per database of each timed test (audit --config)
	Confidence float64   `json:"confidence"`
	Rows       int64     `json:"rows"`
	CellRows   int       `json:"cell_rows"`
	Seconds    float64   `json:"seconds"`
	Results    []*Result `json:"results"`
	// Config says what `audit --config` audited (the mechanism and table);
	// Tests are its distinguishers (the default ones when empty).
	Config string `json:"config,omitempty"`
	// ConfigPath (absolute) and Table are the config file and table that
	// `audit --config` audited: a report card joins the audit only to runs
	// on the same ones. Empty for the audit of the synthetic table.
	ConfigPath string     `json:"config_path,omitempty"`
	Table      string     `json:"table,omitempty"`
	Tests      []TestInfo `json:"tests,omitempty"`
	Notes      []string   `json:"notes,omitempty"`
}

// TestInfo names a distinguisher in a report.
type TestInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// tests are the report's distinguishers.
func (r *Report) tests() []TestInfo {
	if len(r.Tests) > 0 {
		return r.Tests
	}
	var out []TestInfo
	for _, d := range Default(r.CellRows) {
		out = append(out, TestInfo{Name: d.Name, Description: d.Description})
	}
	return out
}

// RunSuite writes the neighbouring databases into o.Dir and audits each
// mechanism on them.
func RunSuite(ctx context.Context, o SuiteOptions) (*Report, error) {
	start := time.Now()
	dbs := [2]string{filepath.Join(o.Dir, "without.db"), filepath.Join(o.Dir, "with.db")}
	if err := dataset.WriteNeighbours(ctx, dbs[0], dbs[1], dataset.NeighbourOptions{Rows: o.Rows, CellRows: int64(o.CellRows)}, dataset.WriteOptions{Force: true}); err != nil {
		return nil, err
	}
	rep := &Report{Trials: o.Trials, Confidence: o.Confidence, Rows: o.Rows, CellRows: o.CellRows}
	for _, m := range o.Mechanisms {
		d := &EngineDeployer{Dir: o.Dir, Databases: dbs, Mechanism: m}
		opts := Options{Trials: o.Trials, Confidence: o.Confidence, Sticky: m.Sticky, CellRows: o.CellRows}
		if o.Progress != nil {
			opts.Progress = o.Progress(m.label())
		}
		res, err := Run(ctx, m.label(), d, opts)
		if err != nil {
			return nil, fmt.Errorf("auditing %s: %w", m.label(), err)
		}
		rep.Results = append(rep.Results, res)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// Print writes the audit as a table: per mechanism, what one query claims,
// the best test with what it was charged and the loss it demonstrates.
func Print(w io.Writer, r *Report) error {
	if r.Config != "" {
		fmt.Fprintf(w, "The firewall as deployed: %s, on neighbours of its own table.\n", r.Config)
	}
	fmt.Fprintf(w, "Privacy loss per person demonstrated by the best of %d distinguishing tests, %d trials per\n", len(r.tests()), r.Trials)
	if r.TimeTrials > 0 {
		fmt.Fprintf(w, "database and test (a timed test: %d statements per database, the two alternating, both deployed\nafresh every block), ", r.TimeTrials)
	} else {
		fmt.Fprint(w, "database and test, ")
	}
	fmt.Fprintf(w, "lower bounds at %g%% confidence jointly (Clopper-Pearson, Bonferroni):\n\n", 100*r.Confidence)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mechanism\tclaimed per query\tbest test\tqueries\tclaimed for the test\terrors (fp/fn)\taudited epsilon\tseconds")
	for _, res := range r.Results {
		b := res.Best()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d/%d\t%s\t%.1f\n", res.Mechanism, Claimed(res.ClaimedPerQuery()), b.Distinguisher, b.Queries,
			Claimed(b.ClaimedEpsilon), b.FalsePos, b.FalseNeg, Audited(b), res.Seconds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nThe tests (every one run against every mechanism, %g s in all):\n", math.Round(r.Seconds))
	for _, d := range r.tests() {
		fmt.Fprintf(w, "  %-17s %s\n", d.Name, d.Description)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "Note:", n)
	}
	fmt.Fprintf(w, "A perfect test over %d trials can show at most %.2f (half of them, for a test whose event is\nchosen on the other half): more trials raise that ceiling.\n", r.Trials, Ceiling(r.Trials, r.Confidence, len(r.tests())))
	return nil
}

// Ceiling is the largest bound a test without errors can show with these
// trials and this joint confidence over k tests.
func Ceiling(trials int, confidence float64, k int) float64 {
	u := ClopperPearsonUpper(0, trials, (1-confidence)/float64(2*k))
	return EpsilonLowerBound(u, u, 0)
}

// ClaimedPerQuery is the epsilon the firewall charged for a one-query test
// (0: the mechanism claims nothing).
func (r *Result) ClaimedPerQuery() float64 {
	for _, m := range r.Measurements {
		if m.Queries == 1 {
			return m.ClaimedEpsilon
		}
	}
	return 0
}

// Claimed formats a claimed epsilon; a mechanism that charges nothing claims
// nothing.
func Claimed(eps float64) string {
	if eps == 0 {
		return "none"
	}
	return fmt.Sprintf("%.3g", eps)
}

// Audited formats a demonstrated loss.
func Audited(m Measurement) string {
	if m.EpsilonLB == 0 {
		return "0 (not shown)"
	}
	return fmt.Sprintf("≥ %.2f", m.EpsilonLB)
}

// WriteJSON saves the report for `attack report --audit` and other tools.
func WriteJSON(path string, r *Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadJSON loads a report written by WriteJSON.
func ReadJSON(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil || r.Results == nil {
		return nil, fmt.Errorf("%s is not an audit written by countwall audit --json", path)
	}
	return &r, nil
}

// StandardNamed is the standard mechanisms restricted to names (all when
// names is empty); an unknown name is an error listing the known ones.
func StandardNamed(names []string, epsilon, delta float64) ([]Mechanism, error) {
	all := Standard(epsilon, delta)
	if len(names) == 0 {
		return all, nil
	}
	var out []Mechanism
	for _, n := range names {
		found := false
		for _, m := range all {
			if m.Name == n {
				out, found = append(out, m), true
			}
		}
		if !found {
			known := make([]string, len(all))
			for i, m := range all {
				known[i] = m.Name
			}
			return nil, fmt.Errorf("no audit for mechanism %q (known: %v)", n, known)
		}
	}
	return out, nil
}

// Output prints an audit to w, and saves it as JSON at jsonOut when one is
// named.
func Output(w io.Writer, r *Report, jsonOut string) error {
	if jsonOut != "" {
		if err := WriteJSON(jsonOut, r); err != nil {
			return err
		}
	}
	return Print(w, r)
}

// NameDeployment records on r what `audit --config` audited, as a run's
// Reach names it: the config file made absolute, and the table (the
// config's only one when none was named), so that the report card joins
// the audit only to runs on the same config and table.
func NameDeployment(r *Report, configPath, table string, cfg *config.Config) {
	if abs, err := filepath.Abs(configPath); err == nil {
		configPath = abs
	}
	if table == "" && len(cfg.Tables) == 1 {
		for name := range cfg.Tables {
			table = name
		}
	}
	r.ConfigPath, r.Table = configPath, strings.ToLower(table)
}
