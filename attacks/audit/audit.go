// Package audit measures the privacy loss an attacker can demonstrate
// against a mechanism, as a lower bound on epsilon per person: the firewall
// is deployed on two neighbouring databases (without and with one person),
// a distinguishing test guesses which one it is talking to, many times over
// with fresh noise, and the test's error rates, bounded with Clopper-Pearson
// intervals, give epsilon >= ln((1 - delta - FPR) / FNR) (Jagielski, Ullman
// and Oprea, "Auditing differentially private machine learning"; Bichsel et
// al., DP-Sniper). The tests speak SQL through an attacks.Querier only.
package audit

import (
	"context"
	"fmt"
	"math"
	"time"

	"countwall/attacks"
)

// World is one of the two neighbouring databases.
type World int

const (
	Without World = iota // the table without the audited person
	With                 // the same table with the audited person added
)

func (w World) String() string {
	if w == With {
		return "with"
	}
	return "without"
}

// Deployment is a firewall in front of one world. Each Session is a new
// analyst with an untouched budget, so that what the firewall charges for a
// test can be read back alone.
type Deployment interface {
	Session(analyst string) attacks.Querier
	Close() error
}

// Deployer opens deployments, each with a new firewall secret: a sticky
// mechanism (noise keyed by the secret) needs one per trial, as a new
// deployment would draw, or its answers would repeat across trials.
type Deployer interface {
	Deploy(ctx context.Context, w World) (Deployment, error)
}

// Options say how an audit runs.
type Options struct {
	Trials int // per world and per distinguisher
	// Confidence is the joint confidence of every bound reported (0.95):
	// each of the 2k rates bounded for k distinguishers is bounded at
	// 1 - (1-Confidence)/2k (Bonferroni), so the best of them, chosen after
	// the fact, still holds at Confidence.
	Confidence float64
	// Sticky deploys afresh for every trial; otherwise one deployment per
	// world serves every trial (fresh noise is drawn per query).
	Sticky bool
	// CellRows is the number of other people in the audited person's cell
	// (the distinguishers' threshold).
	CellRows int
	// Distinguishers are the tests to run (Default(CellRows) when nil).
	Distinguishers []Distinguisher
	// Progress, when set, is told how many trials are done.
	Progress func(done, total int)
}

// Measurement is one distinguisher's outcome against one mechanism.
type Measurement struct {
	Distinguisher string  `json:"distinguisher"`
	Description   string  `json:"description"`
	Queries       int     `json:"queries"` // per trial and world
	Trials        int     `json:"trials"`  // per world
	FalsePos      int     `json:"false_positives"`
	FalseNeg      int     `json:"false_negatives"`
	FPRUpper      float64 `json:"fpr_upper"`
	FNRUpper      float64 `json:"fnr_upper"`
	// ClaimedEpsilon and ClaimedDelta are what the firewall charged for one
	// run of the test (the largest seen), by its own accounting.
	ClaimedEpsilon float64 `json:"claimed_epsilon"`
	ClaimedDelta   float64 `json:"claimed_delta"`
	// EpsilonLB is the demonstrated privacy loss: at least this much, at the
	// report's confidence.
	EpsilonLB float64 `json:"epsilon_lb"`
	// Event is the split estimator's event, chosen on the first half of the
	// trials (Trials, FalsePos and FalseNeg are then the second half's: the
	// event's occurrences in the world it is unlikelier in, and its absences
	// in the other).
	Event string `json:"event,omitempty"`
}

// Result is the audit of one mechanism.
type Result struct {
	Mechanism    string        `json:"mechanism"`
	Trials       int           `json:"trials"`
	Confidence   float64       `json:"confidence"`
	Sticky       bool          `json:"sticky,omitempty"`
	Measurements []Measurement `json:"measurements"`
	Seconds      float64       `json:"seconds"`
}

// Best is the measurement with the largest demonstrated loss (the first
// when none shows any).
func (r *Result) Best() Measurement {
	best := Measurement{}
	for i, m := range r.Measurements {
		if i == 0 || m.EpsilonLB > best.EpsilonLB {
			best = m
		}
	}
	return best
}

// Run audits the mechanism behind d.
func Run(ctx context.Context, mechanism string, d Deployer, o Options) (*Result, error) {
	if o.Trials < 1 {
		return nil, fmt.Errorf("audit: at least one trial is needed, got %d", o.Trials)
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		return nil, fmt.Errorf("audit: confidence must be between 0 and 1, got %g", o.Confidence)
	}
	tests := o.Distinguishers
	if tests == nil {
		tests = Default(o.CellRows)
	}
	start := time.Now()
	run := &trials{d: d, sticky: o.Sticky, tests: tests, tallies: make([]tally, len(tests))}

	var sessions [2][]attacks.Querier
	if !o.Sticky {
		shared, s, err := deployShared(ctx, d, tests)
		if err != nil {
			return nil, err
		}
		defer closeAll(shared[:])
		sessions = s
	}
	for trial := 0; trial < o.Trials; trial++ {
		for _, w := range []World{Without, With} {
			if err := run.once(ctx, w, trial, sessions[w]); err != nil {
				return nil, err
			}
		}
		if o.Progress != nil {
			o.Progress(trial+1, o.Trials)
		}
	}

	alpha := (1 - o.Confidence) / float64(2*len(tests))
	res := &Result{Mechanism: mechanism, Trials: o.Trials, Confidence: o.Confidence, Sticky: o.Sticky}
	for i, test := range tests {
		res.Measurements = append(res.Measurements, run.tallies[i].measurement(test, o.Trials, alpha))
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// tally is what one distinguisher's trials gave, per world: its wrong
// guesses or its scores, and the most the firewall charged for one run.
type tally struct {
	wrong   [2]int
	scores  [2][]float64
	eps, dl float64
}

// deployShared deploys each world once, for an audit without stickiness,
// with one analyst per test and world (a new analyst per trial would cost
// the ledger a durable write each); the charge for a run is read back as
// the difference of SHOW budget around it.
func deployShared(ctx context.Context, d Deployer, tests []Distinguisher) ([2]Deployment, [2][]attacks.Querier, error) {
	var shared [2]Deployment
	var sessions [2][]attacks.Querier
	for _, w := range []World{Without, With} {
		dep, err := d.Deploy(ctx, w)
		if err != nil {
			closeAll(shared[:])
			return shared, sessions, err
		}
		shared[w] = dep
		for _, test := range tests {
			sessions[w] = append(sessions[w], dep.Session(fmt.Sprintf("audit-%s-%s", test.Name, w)))
		}
	}
	return shared, sessions, nil
}

// trials runs the tests and keeps one tally per test.
type trials struct {
	d       Deployer
	sticky  bool
	tests   []Distinguisher
	tallies []tally
}

// once runs every test once in world w and adds the outcomes to the
// tallies. A sticky audit deploys the world afresh for the trial; otherwise
// qs are the shared deployment's sessions.
func (r *trials) once(ctx context.Context, w World, trial int, qs []attacks.Querier) error {
	tests, tallies := r.tests, r.tallies
	var dep Deployment
	if r.sticky {
		var err error
		if dep, err = r.d.Deploy(ctx, w); err != nil {
			return err
		}
		qs = make([]attacks.Querier, len(tests))
		for i, test := range tests {
			qs[i] = dep.Session(fmt.Sprintf("audit-%s-%s-%d", test.Name, w, trial))
		}
	}
	for i, test := range tests {
		eps, delta, guess, score, err := runOnce(ctx, test, qs[i])
		if err != nil {
			if dep != nil {
				dep.Close()
			}
			return fmt.Errorf("%s, trial %d, %s the person: %w", test.Name, trial+1, w, err)
		}
		if test.Score != nil {
			tallies[i].scores[w] = append(tallies[i].scores[w], score)
		} else if guess != w {
			tallies[i].wrong[w]++
		}
		tallies[i].eps, tallies[i].dl = math.Max(tallies[i].eps, eps), math.Max(tallies[i].dl, delta)
	}
	if dep != nil {
		return dep.Close()
	}
	return nil
}

// measurement bounds the test's error rates at level alpha each and the
// privacy loss they demonstrate; a scoring test's bound is the split
// estimator's.
func (t tally) measurement(test Distinguisher, trials int, alpha float64) Measurement {
	m := Measurement{
		Distinguisher: test.Name, Description: test.Description, Queries: test.Queries, Trials: trials,
		FalsePos: t.wrong[Without], FalseNeg: t.wrong[With],
		FPRUpper:       ClopperPearsonUpper(t.wrong[Without], trials, alpha),
		FNRUpper:       ClopperPearsonUpper(t.wrong[With], trials, alpha),
		ClaimedEpsilon: t.eps, ClaimedDelta: t.dl,
	}
	m.EpsilonLB = EpsilonLowerBound(m.FPRUpper, m.FNRUpper, m.ClaimedDelta)
	if test.Score != nil {
		var likely, other, n int
		m.EpsilonLB, m.Event, likely, other, n = SplitBound(t.scores[With], t.scores[Without], m.ClaimedDelta, alpha)
		m.Trials, m.FalsePos, m.FalseNeg = n, other, n-likely
		m.FPRUpper, m.FNRUpper = ClopperPearsonUpper(other, n, alpha), ClopperPearsonUpper(n-likely, n, alpha)
	}
	return m
}

// runOnce runs one test and reads back what the firewall charged for it.
func runOnce(ctx context.Context, test Distinguisher, q attacks.Querier) (eps, delta float64, guess World, score float64, err error) {
	eps0, delta0, err := charged(ctx, q)
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("reading the budget: %w", err)
	}
	if test.Score != nil {
		score, err = test.Score(ctx, q)
	} else {
		guess, err = test.Guess(ctx, q)
	}
	if err != nil {
		return 0, 0, 0, 0, err
	}
	eps1, delta1, err := charged(ctx, q)
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("reading the budget: %w", err)
	}
	return eps1 - eps0, delta1 - delta0, guess, score, nil
}

func closeAll(deps []Deployment) {
	for _, d := range deps {
		if d != nil {
			d.Close()
		}
	}
}

// charged reads back, with SHOW budget, the epsilon and delta the session's
// analyst has been charged, summed over accounting kinds.
func charged(ctx context.Context, q attacks.Querier) (eps, delta float64, err error) {
	rows, err := q.Query(ctx, "SHOW budget")
	if err != nil {
		return 0, 0, err
	}
	epsCol, deltaCol := -1, -1
	for i, c := range rows.Columns {
		switch c {
		case "epsilon_spent":
			epsCol = i
		case "delta_spent":
			deltaCol = i
		}
	}
	if epsCol < 0 {
		return 0, 0, fmt.Errorf("SHOW budget has no epsilon_spent column")
	}
	for r := range rows.Values {
		e, err := rows.Float(r, epsCol)
		if err != nil {
			return 0, 0, err
		}
		eps += e
		if deltaCol >= 0 {
			d, err := rows.Float(r, deltaCol)
			if err != nil {
				return 0, 0, err
			}
			delta += d
		}
	}
	return eps, delta, nil
}
