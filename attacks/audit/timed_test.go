package audit

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"countwall/attacks"
	"countwall/pgerror"
)

// driftClock stands for a machine whose statements slow down as it runs
// (other work starting, a cache filling): the n-th statement of a run,
// whichever world answers it, takes 100 + n/10 time units, plus uniform
// noise in [0, 20), and the world with the person adds shift.
type driftClock struct {
	mu    sync.Mutex
	n     int
	r     *rand.Rand
	shift float64
	order []World // which world answered each statement
}

type driftQuerier struct {
	clock *driftClock
	world World
}

// Query answers SHOW budget with nothing spent, and any other statement
// with its "time".
func (q driftQuerier) Query(_ context.Context, sql string) (*attacks.Rows, error) {
	if sql == showBudget {
		return &attacks.Rows{Columns: []string{"kind", "epsilon_spent", "delta_spent"}}, nil
	}
	return &attacks.Rows{Columns: []string{"time"}, Values: [][]string{{strconv.FormatFloat(q.next(), 'g', -1, 64)}}}, nil
}

// next is the "time" of one statement in q's world.
func (q driftQuerier) next() float64 {
	c := q.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.order = append(c.order, q.world)
	v := 100 + float64(c.n)/100 + 20*c.r.Float64()
	if q.world == With {
		v += c.shift
	}
	return v
}

type driftDeployer struct{ clock *driftClock }

func (d driftDeployer) Deploy(_ context.Context, w World) (Deployment, error) {
	return driftDeployment{driftQuerier{clock: d.clock, world: w}}, nil
}

type driftDeployment struct{ q driftQuerier }

func (d driftDeployment) Session(string) attacks.Querier { return d.q }
func (d driftDeployment) Close() error                   { return nil }

var driftTest = Distinguisher{Name: "time", Queries: 1, Timed: true, Score: func(ctx context.Context, q attacks.Querier) (float64, error) {
	return attacks.Count(ctx, q, "SELECT time")
}}

// TestTimedTestsAlternateWorlds: a timed test's statements go to the two
// worlds in pairs, one each, in a seeded random order, from a pair of
// deployments per block, so that a drift over the run (four times the
// noise's width) falls on both worlds alike and shows no loss, while a
// shift of half the noise's width is seen (0.65 with these seeds, 0.45 to
// 0.65 over five). 4,000 statements per world in blocks of 500, 99.9% confidence:
// without a shift the bound exceeds 0 with probability at most 0.1%; the
// seeds fix the outcome.
func TestTimedTestsAlternateWorlds(t *testing.T) {
	for _, tt := range []struct {
		name     string
		shift    float64
		min, max float64
	}{
		{"drift alone", 0, 0, 0},
		{"drift and a shift", 10, 0.3, math.Inf(1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := &driftClock{r: rand.New(rand.NewPCG(5, 17)), shift: tt.shift}
			res, err := Run(context.Background(), "drift", driftDeployer{clock}, Options{Trials: 1, TimeTrials: 4000, TimeBlock: 500, Seed: 3, Confidence: 0.999, Distinguishers: []Distinguisher{driftTest}})
			if err != nil {
				t.Fatal(err)
			}
			m := res.Measurements[0]
			t.Logf("%s: bound %.3f, %s, on %d", tt.name, m.EpsilonLB, m.Event, m.Trials)
			if m.EpsilonLB < tt.min || m.EpsilonLB > tt.max {
				t.Fatalf("bound %.3f, want within [%g, %g]", m.EpsilonLB, tt.min, tt.max)
			}
			if res.TimeTrials != 4000 || m.Trials != 2000 {
				t.Fatalf("time trials %d, evaluated on %d; want 4000 and 2000", res.TimeTrials, m.Trials)
			}
			// Eight blocks: in each, after the warm-up, every pair is one
			// statement of each world, and each world goes first in about
			// half the pairs.
			first := 0
			for b := range 8 {
				pairs := clock.order[b*(2*timeWarmup+1000) : (b+1)*(2*timeWarmup+1000)][2*timeWarmup:]
				for i := 0; i < len(pairs); i += 2 {
					if pairs[i] == pairs[i+1] {
						t.Fatalf("block %d, pair %d went to %s twice", b, i/2, pairs[i])
					}
					if pairs[i] == With {
						first++
					}
				}
			}
			if len(clock.order) != 8*(2*timeWarmup+1000) {
				t.Fatalf("%d statements, want 8 blocks of %d", len(clock.order), 2*timeWarmup+1000)
			}
			if first < 1800 || first > 2200 {
				t.Fatalf("the world with the person went first in %d of 4000 pairs", first)
			}
		})
	}
}

// TestChooseEventMatchesCounting: the sorted search finds the event that
// counting every sample for every threshold finds, on seeded samples with
// many ties and -Inf (refusals) among them.
func TestChooseEventMatchesCounting(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 50 {
		n := 20 + r.IntN(200)
		with, without := make([]float64, n), make([]float64, n)
		for i := range n {
			with[i], without[i] = float64(r.IntN(12)+trial%3), float64(r.IntN(12))
			if r.IntN(20) == 0 {
				with[i] = math.Inf(-1)
			}
		}
		got, gotOK := chooseEvent(with, without, 0, 0.01)
		want, wantOK := chooseEventByCounting(with, without, 0, 0.01)
		if got != want || gotOK != wantOK {
			t.Fatalf("samples %d: %v (%v), counting finds %v (%v)", trial, got, gotOK, want, wantOK)
		}
	}
}

// chooseEventByCounting is chooseEvent by counting every sample for each
// candidate event.
func chooseEventByCounting(with, without []float64, delta, alpha float64) (scoreEvent, bool) {
	best, found, bestGain := scoreEvent{}, false, 0.0
	n := len(with)
	seen := map[float64]bool{}
	var values []float64
	for _, v := range append(append([]float64{}, with...), without...) {
		if !seen[v] {
			seen[v] = true
			values = append(values, v)
		}
	}
	// In increasing order, as chooseEvent tries them (the first best wins).
	for i := range values {
		for j := i + 1; j < len(values); j++ {
			if values[j] < values[i] {
				values[i], values[j] = values[j], values[i]
			}
		}
	}
	for _, v := range values {
		for _, above := range []bool{true, false} {
			e := scoreEvent{t: v, above: above}
			cw, co := e.count(with), e.count(without)
			for _, likelier := range []World{With, Without} {
				num, den := cw, co
				if likelier == Without {
					num, den = co, cw
				}
				lo, hi := ClopperPearsonLower(num, n, alpha)-delta, ClopperPearsonUpper(den, n, alpha)
				if lo <= 0 || hi <= 0 {
					continue
				}
				if gain := math.Log(lo / hi); gain > bestGain {
					e.likelier = likelier
					best, bestGain, found = e, gain, true
				}
			}
		}
	}
	return best, found
}

// TestTimeBlock: the statements per deployment divide a timed test's
// statements into an even number of blocks, at least two, near the size
// asked for.
func TestTimeBlock(t *testing.T) {
	for _, tt := range []struct{ n, want, block int }{
		{5000, 0, 250},    // 20 blocks of the default
		{5000, 1000, 834}, // 5 blocks round up to 6
		{300, 250, 150},   // 1 block rounds up to 2
		{100, 250, 50},
		{7, 250, 4},
		{1, 250, 1},
		{20000, 250, 250},
	} {
		if got := timeBlock(tt.n, tt.want); got != tt.block {
			t.Errorf("timeBlock(%d, %d) = %d, want %d", tt.n, tt.want, got, tt.block)
		}
	}
}

// cappedFirewall charges 0.5 a statement and refuses an analyst's
// statements (53400) once they have had cap of them; with refuseAll it
// refuses every statement so.
type cappedFirewall struct {
	mu        sync.Mutex
	cap       int
	refuseAll bool
	spent     map[string]int
}

type cappedSession struct {
	f       *cappedFirewall
	analyst string
}

func (s cappedSession) Query(_ context.Context, sql string) (*attacks.Rows, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if sql == showBudget {
		return &attacks.Rows{Columns: []string{"kind", "epsilon_spent", "delta_spent"},
			Values: [][]string{{"dp", strconv.FormatFloat(0.5*float64(f.spent[s.analyst]), 'g', -1, 64), "0"}}}, nil
	}
	if f.refuseAll || f.spent[s.analyst] >= f.cap {
		return nil, pgerror.Errorf(pgerror.ConfigurationLimitExceeded, "the privacy budget is spent")
	}
	f.spent[s.analyst]++
	return &attacks.Rows{Columns: []string{"count"}, Values: [][]string{{"7"}}}, nil
}

type cappedDeployer struct{ f *cappedFirewall }

func (d cappedDeployer) Deploy(context.Context, World) (Deployment, error) { return d, nil }
func (d cappedDeployer) Session(analyst string) attacks.Querier            { return cappedSession{d.f, analyst} }
func (d cappedDeployer) Close() error                                      { return nil }

// TestSpentBudgetsAreRenewed: an analyst whose budget allows 4 statements
// is renewed on the fifth, so that 30 trials of a refusal test and 300
// timed statements per world are all answered, no analyst past its budget,
// and the charge read around a statement is its 0.5; a statement refused
// to an analyst who has spent nothing stays refused (the refusal is the
// statement's own).
func TestSpentBudgetsAreRenewed(t *testing.T) {
	for _, tt := range []struct {
		name      string
		refuseAll bool
		refusals  float64 // the refusal test's score, in every trial
		charged   float64
	}{
		{"budgets run out", false, 0, 0.5},
		{"every statement refused", true, sqlstateScore(pgerror.ConfigurationLimitExceeded), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			refusal := refusalScore("refused", "", "SELECT COUNT(*) FROM people")
			var mu sync.Mutex
			var scores []float64
			score := refusal.Score
			refusal.Score = func(ctx context.Context, q attacks.Querier) (float64, error) {
				v, err := score(ctx, q)
				mu.Lock()
				scores = append(scores, v)
				mu.Unlock()
				return v, err
			}
			tests := []Distinguisher{refusal, timeScore("time", "", "SELECT COUNT(*) FROM people")}
			f := &cappedFirewall{cap: 4, refuseAll: tt.refuseAll, spent: map[string]int{}}
			res, err := Run(context.Background(), "capped", cappedDeployer{f}, Options{Trials: 30, TimeTrials: 300, Confidence: 0.95, Distinguishers: tests})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range res.Measurements {
				if m.ClaimedEpsilon != tt.charged {
					t.Errorf("%s charged %g, want %g", m.Distinguisher, m.ClaimedEpsilon, tt.charged)
				}
			}
			if len(scores) != 60 {
				t.Fatalf("%d refusal scores, want 30 per world", len(scores))
			}
			for i, v := range scores {
				if v != tt.refusals {
					t.Fatalf("refusal score %d is %g, want %g", i, v, tt.refusals)
				}
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			for a, n := range f.spent {
				if n > f.cap {
					t.Errorf("analyst %s answered %d statements, past the budget of %d", a, n, f.cap)
				}
			}
		})
	}
}
