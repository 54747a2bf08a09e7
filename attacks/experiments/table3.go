// Package experiments reproduces the papers' tables with the attack programs.
// An experiment answers its queries through a real Engine in process, SQL
// text and all, one Engine per firewall the paper deploys (a new secret per
// run), running independent deployments side by side. Behind an option the
// Engine reads the grouped stand-in (planner/grouped) instead of SQLite: the
// same answers for one-column queries, without a pass over the table (a test
// holds the two to the same table).
package experiments

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"countwall/attacks"
	"countwall/dataset"
)

// Table3Options choose the Table 3 experiment.
type Table3Options struct {
	AdultCSV string // the Adult extract: columns id, age, ...
	Runs     int    // runs per (D, k); the paper averages 100
	Ds       []int  // perturbation bounds; the paper's are 2, 3, 5
	Ks       []int  // two-partitions per value; the paper's are 50, 100, 200, 250
	BaseK    int    // two-partitions for the base set's total; the paper's is 1,000
	// Seed makes the run reproducible: it chooses the firewall secrets and
	// the two-partitions. Zero draws it at random.
	Seed uint64
	// Simulated answers through Engines whose backend is the grouped stand-in.
	Simulated bool
	// Parallel is how many (D, run) firewalls are attacked at once, each
	// with its own Engine (0: one per CPU). The result does not depend on it.
	Parallel int
	// Progress, when set, is told how many of the Runs*len(Ds)*len(Ks)
	// attacks are done. It is never called concurrently.
	Progress func(done, total int)
}

// Table3Cell is one (D, k) cell of the table: mean values recovered exactly
// per run out of 111, and the paper's figure.
type Table3Cell struct {
	D, K          int
	MeanExact     float64
	Percent       float64
	MinExact      int
	Queries       int // per run
	PaperExact    float64
	PaperPercent  float64
	SuppressedHit float64 // mean suppressed counts (1..4) recovered exactly per run
}

// Table3Result is the reproduced table.
type Table3Result struct {
	Values    int // 111: ages 10..120
	Runs      int
	Seed      uint64
	Cells     []Table3Cell
	Simulated bool  // answered by Engines on the grouped stand-in rather than SQLite
	Parallel  int   // firewalls attacked at once
	Queries   int64 // in all
	Elapsed   time.Duration
}

// Adult age domain of the paper: the ages present (17..88 and 90) padded
// with 10..16, 89 and 91..120, 111 values in all.
const (
	adultAgeMin = 10
	adultAgeMax = 120
)

// paperTable3 is Asghar and Kaafar's Table 3: mean values recovered exactly
// (of 111) over 100 runs, by D and k.
var paperTable3 = map[int]map[int]float64{
	2: {50: 103.2, 100: 110.1, 200: 111.0, 250: 111.0},
	3: {50: 89.8, 100: 103.9, 200: 110.0, 250: 110.8},
	5: {50: 70.2, 100: 88.0, 200: 98.2, 250: 103.6},
}

// table3Job is one firewall of the experiment: bound d, run number run,
// attacked once per k. Jobs share nothing, so they run side by side.
type table3Job struct {
	d, run int
}

// table3Outcome is what one job found, per k in Ks order.
type table3Outcome struct {
	exact, suppressed, queries []int
}

// Table3 loads the Adult CSV into a temporary SQLite file, fronts its age
// column with cellkey (uniform noise on -D..D, counts <= 4 published as 0)
// and runs the noise remover over ages 10..120 for each D and k, Runs times
// each with a fresh firewall secret.
func Table3(ctx context.Context, o Table3Options) (*Table3Result, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	seed, err := table3Seed(o.Seed)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	dir, err := os.MkdirTemp("", "countwall-table3-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	dep := deployment{dbPath: filepath.Join(dir, "adult.db"), table: "adult", unit: "id", column: "age", dir: dir}
	if _, err := dataset.LoadCSV(ctx, dataset.LoadOptions{CSVPath: o.AdultCSV, DBPath: dep.dbPath, Table: dep.table, Unit: dep.unit}); err != nil {
		return nil, fmt.Errorf("loading %s: %w", o.AdultCSV, err)
	}
	truth, err := attacks.TrueHistogram(ctx, dep.dbPath, attacks.Target{Table: dep.table}, dep.column)
	if err != nil {
		return nil, err
	}
	values := attacks.IntRange(adultAgeMin, adultAgeMax)

	jobs := make([]table3Job, 0, len(o.Ds)*o.Runs)
	for _, d := range o.Ds {
		for run := 0; run < o.Runs; run++ {
			jobs = append(jobs, table3Job{d: d, run: run})
		}
	}
	var progressMu sync.Mutex
	total, done := o.Runs*len(o.Ds)*len(o.Ks), 0
	attacked := func() {
		progressMu.Lock()
		defer progressMu.Unlock()
		done++
		if o.Progress != nil {
			o.Progress(done, total)
		}
	}
	run := func(ctx context.Context, j table3Job) (table3Outcome, error) {
		return runTable3Job(ctx, o, dep, j, seed, values, truth, attacked)
	}
	outcomes, err := runJobs(ctx, jobs, o.Parallel, run)
	if err != nil {
		return nil, err
	}
	res := &Table3Result{Values: len(values), Runs: o.Runs, Seed: seed, Simulated: o.Simulated, Parallel: min(o.Parallel, len(jobs))}
	res.combine(o, outcomes)
	res.Elapsed = time.Since(start)
	return res, nil
}

// defaults checks the options and fills in the paper's Ds, Ks and base K
// and one firewall per CPU where they are not given.
func (o *Table3Options) defaults() error {
	if o.Runs < 1 {
		return errors.New("runs must be at least 1")
	}
	if o.Parallel < 0 {
		return errors.New("parallel must be at least 1 (or 0 for one per CPU)")
	}
	if o.Parallel == 0 {
		o.Parallel = runtime.NumCPU()
	}
	if len(o.Ds) == 0 {
		o.Ds = []int{2, 3, 5}
	}
	if len(o.Ks) == 0 {
		o.Ks = []int{50, 100, 200, 250}
	}
	if o.BaseK <= 0 {
		o.BaseK = 1000
	}
	return nil
}

// table3Seed is seed, or a random one when seed is zero.
func table3Seed(seed uint64) (uint64, error) {
	if seed != 0 {
		return seed, nil
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, err
	}
	for _, x := range b {
		seed = seed<<8 | uint64(x)
	}
	return seed, nil
}

// combine adds the jobs' outcomes (in job order: D-major, then run) into
// the table's cells. They are combined in job order whatever order the jobs
// finished in, so that a parallel run adds the same floats in the same order
// as a serial one.
func (res *Table3Result) combine(o Table3Options, outcomes []table3Outcome) {
	for di, d := range o.Ds {
		cells := make([]Table3Cell, len(o.Ks))
		for i, k := range o.Ks {
			cells[i] = Table3Cell{D: d, K: k, MinExact: res.Values, PaperExact: paperTable3[d][k]}
			cells[i].PaperPercent = 100 * cells[i].PaperExact / float64(res.Values)
		}
		for run := 0; run < o.Runs; run++ {
			out := outcomes[di*o.Runs+run]
			for i := range o.Ks {
				c := &cells[i]
				c.MeanExact += float64(out.exact[i]) / float64(o.Runs)
				c.SuppressedHit += float64(out.suppressed[i]) / float64(o.Runs)
				c.MinExact = min(c.MinExact, out.exact[i])
				c.Queries = out.queries[i]
				res.Queries += int64(out.queries[i])
			}
		}
		for i := range cells {
			cells[i].Percent = 100 * cells[i].MeanExact / float64(res.Values)
		}
		res.Cells = append(res.Cells, cells...)
	}
}

// table3Secret is the firewall secret of run run at bound d: derived from
// the seed, so that a seeded table is the same through either firewall.
func table3Secret(seed uint64, d, run int) []byte {
	secret := make([]byte, 32)
	for j := range secret {
		secret[j] = byte(splitmix(seed^uint64(d)<<40^uint64(run)<<8^uint64(j)) >> 56)
	}
	return secret
}

// runTable3Job deploys one firewall with a fresh secret (new record keys,
// so new noise for every contributor set, as a new installation would give)
// and runs the noise remover against it once per k.
func runTable3Job(ctx context.Context, o Table3Options, dep deployment, j table3Job, seed uint64, values []string, truth map[string]int64, attacked func()) (out table3Outcome, err error) {
	secret := table3Secret(seed, j.d, j.run)
	var fw firewall
	name := fmt.Sprintf("D%d-run%d", j.d, j.run+1)
	if o.Simulated {
		fw, err = dep.openSimulated(ctx, j.d, name, secret)
	} else {
		fw, err = dep.openEngine(ctx, j.d, name, secret)
	}
	if err != nil {
		return out, fmt.Errorf("D=%d run %d: %w", j.d, j.run+1, err)
	}
	defer func() { err = errors.Join(err, fw.Close()) }()
	for _, k := range o.Ks {
		q, closeConn, err := fw.connect()
		if err != nil {
			return out, err
		}
		logged := &attacks.Logged{Querier: untilCancelled{q}}
		r, err := attacks.NoiseRemover.Run(ctx, logged, attacks.Options{
			Target: attacks.Target{Table: dep.table}, Column: dep.column, Values: values,
			K: k, BaseK: o.BaseK, Seed: splitmix(seed ^ uint64(j.run)<<16 ^ uint64(k)<<4 ^ uint64(j.d)),
		})
		closeConn()
		if err == nil {
			// The noise remover keeps what it has on an interrupt; the table
			// stops there, its partial runs no figure.
			err = ctx.Err()
		}
		if err != nil {
			return out, fmt.Errorf("D=%d k=%d run %d: %w", j.d, k, j.run+1, err)
		}
		exact, suppressed := 0, 0
		for _, b := range r.Histogram {
			t := truth[b.Value]
			if b.Estimate == t {
				exact++
				if t >= 1 && t <= 4 {
					suppressed++
				}
			}
		}
		out.exact = append(out.exact, exact)
		out.suppressed = append(out.suppressed, suppressed)
		out.queries = append(out.queries, logged.Sent())
		attacked()
	}
	return out, nil
}

// untilCancelled refuses every statement once ctx is done: neither the
// noise remover nor an in-process Engine answering from memory looks at the
// context, and a table of millions of queries must stop on an interrupt.
type untilCancelled struct{ q attacks.Querier }

func (u untilCancelled) Query(ctx context.Context, sql string) (*attacks.Rows, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return u.q.Query(ctx, sql)
}

// Print writes the table beside the paper's.
func (r *Table3Result) Print(w io.Writer) {
	fmt.Fprintf(w, "Noise remover on the Adult age column (%d values, %d..%d), cellkey uniform noise on -D..D,\n", r.Values, adultAgeMin, adultAgeMax)
	fmt.Fprintf(w, "counts <= 4 published as 0; mean values recovered exactly over %d runs (seed %d), paper's Table 3 below each.\n\n", r.Runs, r.Seed)
	var ks []int
	var ds []int
	for _, c := range r.Cells {
		if len(ds) == 0 || ds[len(ds)-1] != c.D {
			ds = append(ds, c.D)
		}
		if len(ds) == 1 {
			ks = append(ks, c.K)
		}
	}
	header := make([]string, len(ks))
	for i, k := range ks {
		header[i] = fmt.Sprintf("k=%d", k)
	}
	fmt.Fprintf(w, "%-10s  %s\n", "D", joinPadded(header))
	for _, d := range ds {
		var ours, paper, worst []string
		for _, c := range r.Cells {
			if c.D != d {
				continue
			}
			ours = append(ours, fmt.Sprintf("%5.1f (%5.1f%%)", c.MeanExact, c.Percent))
			worst = append(worst, fmt.Sprintf("min %d, %d q/run", c.MinExact, c.Queries))
			if c.PaperExact > 0 {
				paper = append(paper, fmt.Sprintf("%5.1f (%5.1f%%)", c.PaperExact, c.PaperPercent))
			} else {
				paper = append(paper, "-")
			}
		}
		fmt.Fprintf(w, "%-10s  %s\n", fmt.Sprintf("±%d", d), joinPadded(ours))
		fmt.Fprintf(w, "%-10s  %s\n", "  paper", joinPadded(paper))
		fmt.Fprintf(w, "%-10s  %s\n", "", joinPadded(worst))
	}
	through := "the Engine in process (SQL text through parse, plan, the table, cellkey, ledger, audit)"
	if r.Simulated {
		through = "the Engine in process on the grouped stand-in (SQL text through parse, the groups, cellkey, ledger, audit)"
	}
	rate := float64(r.Queries) / max(r.Elapsed.Seconds(), 1e-9)
	fmt.Fprintf(w, "\nAnswered by %s, %d firewalls at once:\n%d queries in %s (%.0f a second).\n",
		through, r.Parallel, r.Queries, r.Elapsed.Round(time.Second), rate)
}

func joinPadded(cols []string) string {
	for i, c := range cols {
		cols[i] = fmt.Sprintf("%-20s", c)
	}
	return strings.TrimRight(strings.Join(cols, "  "), " ")
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
