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
	"math/rand/v2"
	"strconv"
	"time"

	"countwall/attacks"
	"countwall/pgerror"
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
	// TimeTrials is how many statements each timed test sends to each
	// world (Trials when 0): a time moved by one person is a small shift
	// under much noise, which takes thousands of samples to see.
	TimeTrials int
	// TimeBlock is about how many statements of a timed test each world
	// answers from one deployment (DefaultTimeBlock when 0; timeBlock
	// rounds it to an even number of blocks): the worlds are deployed
	// anew, together, for each block.
	TimeBlock int
	// Seed orders each pair of timed statements (which world goes first).
	Seed uint64
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
	TimeTrials   int           `json:"time_trials,omitempty"` // statements per world of each timed test
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
	timeTrials := o.TimeTrials
	if timeTrials < 1 {
		timeTrials = o.Trials
	}
	untimed, timed := splitTimed(tests)
	start := time.Now()
	run := &trials{d: d, tests: tests, tallies: make([]tally, len(tests))}
	total := o.Trials*min(1, len(untimed)) + timeTrials*len(timed)
	progress := func(done int) {
		if o.Progress != nil {
			o.Progress(done, total)
		}
	}

	// Without stickiness both worlds are deployed once and stay live for
	// every untimed test.
	var sessions [2][]attacks.Querier
	if !o.Sticky && len(untimed) > 0 {
		shared, s, err := deployShared(ctx, d, tests)
		if err != nil {
			return nil, err
		}
		defer closeAll(shared[:])
		sessions = s
	}
	if len(untimed) > 0 {
		if err := run.untimed(ctx, o, untimed, sessions, progress); err != nil {
			return nil, err
		}
	}
	done := o.Trials * min(1, len(untimed))
	block := timeBlock(timeTrials, o.TimeBlock)
	for k, i := range timed {
		order := rand.New(rand.NewPCG(o.Seed, uint64(k)))
		if err := run.timed(ctx, i, timeTrials, block, order, func(n int) { progress(done + n) }); err != nil {
			return nil, err
		}
		done += timeTrials
	}

	alpha := (1 - o.Confidence) / float64(2*len(tests))
	res := &Result{Mechanism: mechanism, Trials: o.Trials, Confidence: o.Confidence, Sticky: o.Sticky}
	if len(timed) > 0 {
		res.TimeTrials = timeTrials
	}
	for i, test := range tests {
		n := o.Trials
		if test.Timed {
			n = timeTrials
		}
		res.Measurements = append(res.Measurements, run.tallies[i].measurement(test, n, alpha))
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// splitTimed is the indexes of the tests scored by their answers and of
// those scored by their time, which are sampled apart.
func splitTimed(tests []Distinguisher) (untimed, timed []int) {
	for i, t := range tests {
		if t.Timed {
			timed = append(timed, i)
		} else {
			untimed = append(untimed, i)
		}
	}
	return untimed, timed
}

// untimed runs o.Trials trials of the untimed tests in each world, on the
// shared sessions unless the mechanism is sticky (each trial deploys anew).
func (run *trials) untimed(ctx context.Context, o Options, tests []int, sessions [2][]attacks.Querier, progress func(int)) error {
	for trial := 0; trial < o.Trials; trial++ {
		for _, w := range []World{Without, With} {
			qs := sessions[w]
			if o.Sticky {
				qs = nil
			}
			if err := run.once(ctx, w, trial, tests, qs); err != nil {
				return err
			}
		}
		progress(trial + 1)
	}
	return nil
}

// DefaultTimeBlock is how many statements of a timed test each world
// answers from one deployment. Two deployments of the same table differ in
// time by where their memory happens to lie (two deployments of one file,
// 20,000 statements each, showed 0.18 between them at 120,000 rows), so a
// timed test deploys both worlds afresh every block and chooses its event
// on the even-numbered blocks and bounds it on the odd-numbered ones: what
// one deployment's layout gives is noise in the other half, not a signal
// that survives the split.
const DefaultTimeBlock = 250

// timeBlock is the statements per deployment for n statements per world,
// about want (DefaultTimeBlock when 0) and dividing n into an even number of
// blocks, at least two, so that the halves of the split are alike.
func timeBlock(n, want int) int {
	if want < 1 {
		want = DefaultTimeBlock
	}
	blocks := max(2, (n+want/2)/want)
	blocks += blocks % 2
	return max(1, (n+blocks-1)/blocks)
}

// timeWarmup is how many statements of a timed test each world answers,
// alternately, after each deployment before any is kept: the first answers
// pay for what later ones find ready (the table's snapshot, a statement's
// plan), in both worlds alike. Few, since a block's deployments are new
// and some statements (a GROUP BY finding a million groups) take a second.
const timeWarmup = 5

// timed samples test i: n statements to each world, block by block, both
// worlds deployed afresh for each block and live together, taking turns
// statement by statement (which one goes first in each pair drawn from
// order), so that whatever else the machine does falls on both alike. The
// charge is read around the first kept statement of each world.
func (r *trials) timed(ctx context.Context, i, n, block int, order *rand.Rand, progress func(int)) error {
	test, t := r.tests[i], &r.tallies[i]
	t.block = block
	t.scores[Without], t.scores[With] = make([]float64, 0, n), make([]float64, 0, n)
	for start := 0; start < n; start += block {
		var deps [2]Deployment
		var qs [2]attacks.Querier
		for _, w := range []World{Without, With} {
			dep, err := r.d.Deploy(ctx, w)
			if err != nil {
				closeAll(deps[:])
				return err
			}
			deps[w], qs[w] = dep, newBudgeted(dep, fmt.Sprintf("audit-%s-%s-b%d", test.Name, w, start/block))
		}
		err := r.timedBlock(ctx, test, t, start, min(n, start+block), qs, order)
		closeAll(deps[:])
		if err != nil {
			return err
		}
		progress(min(n, start+block))
	}
	return nil
}

// timedBlock takes statements from..to-1 of a timed test from one pair of
// deployments, after the warm-up.
func (r *trials) timedBlock(ctx context.Context, test Distinguisher, t *tally, from, to int, qs [2]attacks.Querier, order *rand.Rand) error {
	for range timeWarmup {
		for _, w := range []World{Without, With} {
			if _, err := test.Score(ctx, qs[w]); err != nil {
				return fmt.Errorf("%s, warming up, %s the person: %w", test.Name, w, err)
			}
		}
	}
	for trial := from; trial < to; trial++ {
		first := World(order.IntN(2))
		for _, w := range []World{first, 1 - first} {
			var score float64
			var err error
			if trial == 0 {
				var eps, delta float64
				eps, delta, _, score, err = runOnce(ctx, test, qs[w])
				t.eps, t.dl = math.Max(t.eps, eps), math.Max(t.dl, delta)
			} else {
				score, err = test.Score(ctx, qs[w])
			}
			if err != nil {
				return fmt.Errorf("%s, statement %d, %s the person: %w", test.Name, trial+1, w, err)
			}
			t.scores[w] = append(t.scores[w], score)
		}
	}
	return nil
}

// tally is what one distinguisher's trials gave, per world: its wrong
// guesses or its scores, and the most the firewall charged for one run.
type tally struct {
	wrong   [2]int
	scores  [2][]float64
	eps, dl float64
	block   int // a timed test's statements per deployment
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
			sessions[w] = append(sessions[w], newBudgeted(dep, fmt.Sprintf("audit-%s-%s", test.Name, w)))
		}
	}
	return shared, sessions, nil
}

// trials runs the tests and keeps one tally per test.
type trials struct {
	d       Deployer
	tests   []Distinguisher
	tallies []tally
}

// once runs the tests named by which once in world w and adds the outcomes
// to the tallies. With qs nil it deploys the world afresh for the trial
// (a sticky audit); otherwise qs are the shared deployment's sessions, one
// per test.
func (r *trials) once(ctx context.Context, w World, trial int, which []int, qs []attacks.Querier) error {
	tests, tallies := r.tests, r.tallies
	var dep Deployment
	if qs == nil {
		var err error
		if dep, err = r.d.Deploy(ctx, w); err != nil {
			return err
		}
		qs = make([]attacks.Querier, len(tests))
		for _, i := range which {
			qs[i] = newBudgeted(dep, fmt.Sprintf("audit-%s-%s-%d", tests[i].Name, w, trial))
		}
	}
	for _, i := range which {
		test := tests[i]
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
		if test.Timed {
			sel, eval := timedHalves(t.scores, t.block)
			m.EpsilonLB, m.Event, likely, other, n = splitBound(sel, eval, m.ClaimedDelta, alpha)
		} else {
			m.EpsilonLB, m.Event, likely, other, n = SplitBound(t.scores[With], t.scores[Without], m.ClaimedDelta, alpha)
		}
		m.Trials, m.FalsePos, m.FalseNeg = n, other, n-likely
		m.FPRUpper, m.FNRUpper = ClopperPearsonUpper(other, n, alpha), ClopperPearsonUpper(n-likely, n, alpha)
	}
	return m
}

// timedHalves splits a timed test's samples, in the order they were taken
// (block statements per deployment), into the half the split estimator
// chooses its event on and the half it bounds it on: the even-numbered
// blocks and the odd-numbered ones, so that no deployment is in both and
// both span the whole run (the machine slowing down or speeding up over
// the run then does not make the event chosen early mean something else
// late). A single block is dealt sample by sample instead.
func timedHalves(scores [2][]float64, block int) (sel, eval [2][]float64) {
	for w, vs := range scores {
		for i, v := range vs {
			half := (i / max(block, 1)) % 2
			if len(vs) <= block {
				half = i % 2
			}
			if half == 0 {
				sel[w] = append(sel[w], v)
			} else {
				eval[w] = append(eval[w], v)
			}
		}
	}
	return sel, eval
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

// budgeted is one test's analyst in one world, renewed when its budget
// runs out: the audit measures what one statement shows, not how far a cap
// lets an analyst compose (a delta cap of 1e-5 allows ten GROUP BYs over an
// undeclared column at delta 1e-6). A refusal for a spent budget (53400)
// moves it to a new analyst, who sends the statement again, and SHOW budget
// then shows what the analysts before were charged in a row of its own, so
// that a charge read around a statement stays that statement's. The new
// analyst's refusal, if it is refused too, is passed on: a budget no
// statement has touched refuses for the statement itself. A renewal falls
// inside a timed statement, at the same statement in both worlds (their
// charges are the same).
type budgeted struct {
	dep        Deployment
	name       string
	renewals   int
	q          attacks.Querier
	eps, delta float64 // charged to the analysts before
}

func newBudgeted(dep Deployment, name string) *budgeted {
	return &budgeted{dep: dep, name: name, q: dep.Session(name)}
}

func (b *budgeted) Query(ctx context.Context, sql string) (*attacks.Rows, error) {
	rows, err := b.q.Query(ctx, sql)
	if sql == showBudget {
		if err == nil && b.renewals > 0 && len(rows.Columns) > 0 {
			row := make([]string, len(rows.Columns))
			for i, c := range rows.Columns {
				switch c {
				case "epsilon_spent":
					row[i] = strconv.FormatFloat(b.eps, 'g', -1, 64)
				case "delta_spent":
					row[i] = strconv.FormatFloat(b.delta, 'g', -1, 64)
				case "kind":
					row[i] = "renewed analysts"
				default:
					row[i] = "0"
				}
			}
			rows.Values = append(rows.Values, row)
		}
		return rows, err
	}
	if attacks.SQLState(err) != pgerror.ConfigurationLimitExceeded {
		return rows, err
	}
	eps, delta, cerr := charged(ctx, b.q)
	if cerr != nil {
		return nil, cerr
	}
	b.eps, b.delta, b.renewals = b.eps+eps, b.delta+delta, b.renewals+1
	b.q = b.dep.Session(fmt.Sprintf("%s-r%d", b.name, b.renewals))
	return b.q.Query(ctx, sql)
}

// showBudget reads an analyst's spending.
const showBudget = "SHOW budget"

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
	rows, err := q.Query(ctx, showBudget)
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
