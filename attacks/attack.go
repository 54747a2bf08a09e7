package attacks

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/spf13/pflag"
	_ "modernc.org/sqlite" // the truth database is read with the sqlite driver

	"countwall/pglex"
)

// Target is what an attack goes after: a table and a predicate whose count,
// or whose sum of a numeric column (the sum attacks), the firewall would
// rather not reveal exactly.
type Target struct {
	Table string
	Where string // SQL predicate, as the analyst would type it
	// Sum, when set, is the column whose SUM over the rows Where selects is
	// the secret; otherwise it is their COUNT(*).
	Sum string
}

// aggregate is the select list that asks the target's secret.
func (t Target) aggregate() string {
	if t.Sum != "" {
		return "SUM(" + pglex.QuoteIdent(t.Sum) + ")"
	}
	return "COUNT(*)"
}

func (t Target) querySQL() string {
	if t.Where == "" {
		return "SELECT " + t.aggregate() + " FROM " + t.Table
	}
	return "SELECT " + t.aggregate() + " FROM " + t.Table + " WHERE " + t.Where
}

// Options tune an attack run.
type Options struct {
	Target Target
	// Cells are predicates over disjoint sets of contributors, and Split two
	// predicates that divide every cell in two (perturbation-finder).
	Cells []string
	Split []string
	// MaxQueries stops the attack after this many queries (0: no limit but
	// the attack's own); the logging querier enforces it (Logged.Max).
	MaxQueries int
	// Background is what the attacker knows beforehand, as a file: a
	// database read for public columns only (linear-reconstruction) or a
	// population file (tracing). The attacks that need it say so.
	Background string
	// Connect, when set, reaches a second firewall (a PostgreSQL URL, or a
	// config run in process): prior-release's earlier exact release.
	Connect func(ctx context.Context, dsn, config string) (Querier, func(), error)
	// Reconnect, when set, opens one more connection to the firewall q
	// reaches, as the same analyst (a new wire connection, or a new session
	// of the same in-process Engine); the closer releases it. Execute routes
	// what it returns through its logging Querier.
	Reconnect func(ctx context.Context) (Querier, func(), error)
	// Parallel is how many connections an attack that can split its work
	// may use (idp-reconstruct); 0 or 1 is one, the connection it was given.
	Parallel int
	// Pipeline is how many independent searches an attack may run at once
	// on each connection, their statements sent together (BatchQuerier);
	// 0 or 1 sends each statement after the answer to the one before.
	Pipeline int
	// Params are the attack's own parameters, a pointer to a struct declared
	// in its file, filled by its Demo and bound to its Flags.
	Params any

	// Histogram attacks (noise-remover) recover the count of every value of
	// Column among the rows Target.Where selects; Values is the column's
	// public domain as SQL literals (17, 'F').
	Column string
	Values []string
	// K is the number of two-partitions averaged per value, BaseK the number
	// for the base set's total, BaseSize the size of the base set (0: defaults).
	K, BaseK, BaseSize int
	// Seed chooses which two-partitions are sampled.
	Seed uint64
	// Progress, when set, is told how many steps of a long attack are done;
	// Stage, when set, what the attack is working through ("column 3 of 10:
	// age"), for the progress line.
	Progress func(done, total int)
	Stage    func(stage string)

	// Threshold attacks (idp-*, bdp-existence) meet the firewall this way:
	// the idp group size they assume, the epsilon share they ask for, the
	// table size when it is known.
	Threshold ThresholdSetup
	// Domains are the public domains of the columns an attack works through,
	// in the order it takes them.
	Domains []Domain
	// M is how many times the variance test repeats a query (idp-variance).
	M int
}

// Result is what a run recovered and what it cost; it is written as JSON for
// the report card.
type Result struct {
	Attack    string  `json:"attack"`
	Target    string  `json:"target"`
	Estimate  float64 `json:"estimate"`
	Recovered int64   `json:"recovered"`
	Queries   int     `json:"queries"`
	Refused   int     `json:"refused"`
	// Spent is the analyst's running total by accounting kind, as SHOW
	// budget reads after the run: what this run cost plus whatever the
	// analyst had spent before it (earlier runs, other sessions).
	Spent map[string]float64 `json:"epsilon_spent,omitempty"`
	// Charged is what this run cost by accounting kind: SHOW budget after
	// the run less SHOW budget before it. Another session of the same
	// analyst spending meanwhile is counted in it too; under zCDP
	// composition (gaussian) it is the rise of the analyst's total
	// epsilon, which is less than the run's epsilon on its own would be.
	// Nil when the budget could not be read before the run.
	Charged map[string]float64 `json:"epsilon_charged,omitempty"`
	Seconds float64            `json:"seconds"`
	Truth   *int64             `json:"truth,omitempty"`
	Exact   *bool              `json:"exact,omitempty"`
	Note    string             `json:"note,omitempty"`

	// Mechanism is the mechanism the firewall said it runs (SHOW mechanism).
	Mechanism string `json:"mechanism,omitempty"`
	// Reach is how the run reached the firewall, set by whoever opened the
	// connection (the attack command, the demo); nil when not recorded.
	Reach *Reach `json:"reach,omitempty"`
	// Histogram is what a histogram attack recovered, value by value;
	// CellsTotal and CellsExact score it when the truth is known, and
	// Success is the fraction of cells (or, for one target, 0 or 1)
	// recovered exactly.
	// Undecided says the attack reached no verdict (stopped first, or the
	// firewall's answers could not be read with certainty): Recovered and
	// Estimate are then 0 and left out of the JSON, since every number,
	// -1 included, may be a value of some domain.
	Undecided  bool  `json:"undecided,omitempty"`
	Histogram  []Bin `json:"histogram,omitempty"`
	CellsTotal int   `json:"cells_total,omitempty"`
	// Unit says what CellsExact of CellsTotal are ("bits recovered
	// exactly", "combinations classified right"), for the headline.
	Unit       string         `json:"unit,omitempty"`
	CellsExact *int           `json:"cells_exact,omitempty"`
	Success    *float64       `json:"success,omitempty"`
	Details    map[string]any `json:"details,omitempty"`
	// Progress is how far the attack had got against the queries it had
	// sent, as it went (for long attacks that report their steps): the
	// HTML report card plots it.
	Progress []ProgressPoint `json:"progress,omitempty"`
}

// MarshalJSON writes a result without recovered and estimate when it has
// no verdict ("undecided": true says so): a number there would read as a
// value recovered.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result // without this method
	if !r.Undecided {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		plain
		Recovered *int64   `json:"recovered,omitempty"`
		Estimate  *float64 `json:"estimate,omitempty"`
	}{plain: plain(r)})
}

// ProgressPoint is one step of an attack's progress: Done of Total steps
// finished after Queries statements.
type ProgressPoint struct {
	Queries int `json:"queries"`
	Done    int `json:"done"`
	Total   int `json:"total"`
}

// maxProgressPoints bounds the series kept per run: enough for a plot.
const maxProgressPoints = 100

// recordProgress wraps o.Progress so that Execute also keeps, at most
// maxProgressPoints times, the queries sent when a step finished.
func recordProgress(o *Options, q *Logged, into *[]ProgressPoint) {
	next := o.Progress
	var mu sync.Mutex
	o.Progress = func(done, total int) {
		mu.Lock()
		pts := *into
		keep := total > 0 && (len(pts) == 0 || done == total ||
			done*maxProgressPoints/total != pts[len(pts)-1].Done*maxProgressPoints/max(pts[len(pts)-1].Total, 1))
		if keep && len(pts) <= maxProgressPoints {
			*into = append(pts, ProgressPoint{Queries: q.Sent(), Done: done, Total: total})
		}
		mu.Unlock()
		if next != nil {
			next(done, total)
		}
	}
}

// Bin is one value of a recovered histogram.
type Bin struct {
	Value    string `json:"value"`
	Answer   int64  `json:"answer"`   // what the firewall published for the value alone
	Estimate int64  `json:"estimate"` // what the attack recovered; -1 when it stopped first
	Truth    *int64 `json:"truth,omitempty"`
}

// Attack is one attack program.
type Attack struct {
	Name    string
	Against string // the mechanism it was designed against
	Source  string // where it comes from in the literature
	Summary string
	// Script is the whole SQL the attack sends, for non-adaptive attacks
	// (nil for adaptive ones).
	Script func(o Options) []string
	// Run performs the attack through q.
	Run func(ctx context.Context, q Querier, o Options) (*Result, error)
	// Score, when set, scores a result against the protected database at
	// truthPath; attacks without it are scored on the target's count.
	Score func(ctx context.Context, truthPath string, o Options, r *Result) error
	// Demo, when set, gives the attack's options on the demo database (the
	// people table that `countwall gen people` writes), sized to run in
	// seconds through the wire against its 20,000 rows.
	Demo func() Options
	// Flags, when set, declares the attack's own flags on f, bound into o,
	// which holds the attack's demo defaults when it is called.
	Flags func(f *pflag.FlagSet, o *Options)
}

var registry = map[string]*Attack{}

func register(a *Attack) { registry[a.Name] = a }

// Lookup finds an attack by name.
func Lookup(name string) (*Attack, bool) {
	a, ok := registry[name]
	return a, ok
}

// All lists the attacks by name.
func All() []*Attack {
	out := make([]*Attack, 0, len(registry))
	for _, a := range registry {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Execute runs an attack through a logging Querier, reads the budget spent
// back (the analyst's total, and this run's cost as the difference of SHOW
// budget before and after), and scores the result against the truth
// database when one is given.
func Execute(ctx context.Context, a *Attack, q *Logged, o Options, truthPath string) (*Result, error) {
	start := time.Now()
	if o.MaxQueries > 0 {
		q.Max = o.MaxQueries
	}
	// A firewall without SHOW budget charges nothing to read: before stays
	// nil and so does Charged.
	before, beforeErr := Spent(ctx, q)
	reopen := o.Reconnect
	if open := o.Reconnect; open != nil {
		// Every further connection is counted, limited and logged with q.
		o.Reconnect = func(ctx context.Context) (Querier, func(), error) {
			c, closeC, err := open(ctx)
			if err != nil {
				return nil, nil, err
			}
			return q.Through(c), closeC, nil
		}
	}
	var progress []ProgressPoint
	recordProgress(&o, q, &progress)
	res, err := a.Run(ctx, q, o)
	if errors.Is(err, ErrInterrupted) {
		// Interrupted before it had anything to keep: a result all the
		// same, with no verdict, so that the run is still written.
		res, err = &Result{Undecided: true, Note: fmt.Sprintf("stopped before a verdict: %v", err)}, nil
	}
	if err != nil {
		return nil, err
	}
	// An interrupted run keeps what it recovered: the read-backs and the
	// score below still run, on a context the interrupt does not cancel.
	ctx, cancel := afterRun(ctx)
	defer cancel()
	res.Progress = progress
	res.Attack, res.Target = a.Name, o.Target.querySQL()
	res.Queries, res.Refused = q.Sent(), q.Refused()
	res.Seconds = time.Since(start).Seconds()
	readBack(ctx, q, reopen, res)
	if beforeErr == nil && res.Spent != nil {
		res.Charged = Difference(res.Spent, before)
	}
	if err := score(ctx, a, truthPath, o, res); err != nil {
		return nil, err
	}
	return res, nil
}

// readBack reads what the analyst has spent (SHOW budget) and, when the
// attack did not say, the mechanism into res, through q or, when q no
// longer answers (a wire connection an interrupt closed), through a new
// connection from reopen, as the same analyst.
func readBack(ctx context.Context, q Querier, reopen func(context.Context) (Querier, func(), error), res *Result) {
	spent, err := Spent(ctx, q)
	if err != nil && reopen != nil {
		if c, closeC, openErr := reopen(ctx); openErr == nil {
			defer closeC()
			q = c
			spent, err = Spent(ctx, q)
		}
	}
	if err == nil {
		res.Spent = spent
	}
	if res.Mechanism == "" {
		res.Mechanism = mechanismName(ctx, q)
	}
}

// score scores res against the protected database at truthPath, when one
// is given: with the attack's own Score, else on the target's count.
func score(ctx context.Context, a *Attack, truthPath string, o Options, res *Result) error {
	switch {
	case truthPath == "":
	case a.Score != nil:
		return a.Score(ctx, truthPath, o, res)
	default:
		truth, err := TrueCount(ctx, truthPath, o.Target)
		if err != nil {
			return err
		}
		exact := !res.Undecided && truth == res.Recovered
		success := 0.0
		if exact {
			success = 1
		}
		res.Truth, res.Exact, res.Success = &truth, &exact, &success
	}
	return nil
}

// afterRunTimeout bounds the read-backs and the scoring of an interrupted
// run: a second Ctrl-C is not needed to end them.
const afterRunTimeout = time.Minute

// afterRun is the context of what follows a run: ctx while it is live, else
// one the interrupt does not cancel, with a deadline of its own.
func afterRun(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Err() == nil {
		return ctx, func() {}
	}
	return context.WithTimeout(context.WithoutCancel(ctx), afterRunTimeout)
}

// Difference is what was spent between two readings of SHOW budget, by
// accounting kind: every kind either reading holds, a kind missing from one
// reading counting as 0 there.
func Difference(after, before map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(after))
	for k, v := range after {
		out[k] = v - before[k]
	}
	for k, v := range before {
		if _, ok := after[k]; !ok {
			out[k] = -v
		}
	}
	return out
}

// TrueCount reads the target's true count (its true sum, rounded, for a
// sum target) from the protected database, opened read-only: the attacker's
// ground truth, never the firewall's path.
func TrueCount(ctx context.Context, path string, t Target) (int64, error) {
	v, err := TrueValue(ctx, path, t)
	return int64(math.Round(v)), err
}

// TrueValue reads the target's true count or sum (0 for the sum of no
// value, which SQL makes NULL) from the protected database, read-only.
func TrueValue(ctx context.Context, path string, t Target) (float64, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return 0, fmt.Errorf("opening the truth database: %w", err)
	}
	defer db.Close()
	var n sql.NullFloat64
	if err := db.QueryRowContext(ctx, t.querySQL()).Scan(&n); err != nil {
		return 0, fmt.Errorf("reading the target from the truth database: %w", err)
	}
	return n.Float64, nil
}
