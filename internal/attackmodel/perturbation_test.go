package attackmodel

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"countwall/attacks"
	"countwall/ir"
	"countwall/mechanisms"
)

// stickyCells is a Querier that models the cell key method exactly: every
// distinct query text is a distinct contributor set with its own random
// contributor key, answered by the real cellkey mechanism. Cells count 50
// and their halves 25, so noise comes from the table's uniform rows. It
// lets the statistical test run thousands of attacks in a second; the
// Engine path is covered by TestPerturbationFinderThroughTheEngine.
type stickyCells struct {
	mech mechanisms.Mechanism
	rng  *rand.Rand
	keys map[string]uint32
}

func newStickyCells(t *testing.T, d int, seed uint64) *stickyCells {
	m, err := mechanisms.New("cellkey", mechanisms.Params{"ptable": "uniform", "d": d, "suppress_at": 4}, mechanisms.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return &stickyCells{mech: m, rng: rand.New(rand.NewPCG(seed, 1)), keys: map[string]uint32{}}
}

func (s *stickyCells) Query(ctx context.Context, sql string) (*attacks.Rows, error) {
	key, ok := s.keys[sql]
	if !ok {
		key = s.rng.Uint32()
		s.keys[sql] = key
	}
	count := int64(50)
	if strings.Count(sql, " AND ") == 1 {
		count = 25
	}
	req := &mechanisms.Request{Query: &ir.Query{Table: "t"}, Result: &ir.Result{Cells: []ir.Cell{{Count: count, Key: key, InDomain: true}}}}
	answers, _, err := s.mech.Answer(ctx, req)
	if err != nil {
		return nil, err
	}
	return &attacks.Rows{Columns: []string{"count"}, Values: [][]string{{fmt.Sprint(answers[0].Int)}}}, nil
}

func cellsOptions(m int) attacks.Options {
	cells := make([]string, m)
	for i := range cells {
		cells[i] = fmt.Sprintf("suburb = 'suburb_%04d'", i+1)
	}
	return attacks.Options{Target: attacks.Target{Table: "people"}, Cells: cells, Split: []string{"sex = 'F'", "sex = 'M'"}}
}

// The empirical success rate over 1,000 seeded runs is within 4.5 binomial
// standard errors of Proposition 2's 1-(1-20/(2D+1)^3)^m: each check fails
// falsely with probability below 7e-6, all six below 5e-5.
func TestPerturbationFinderMatchesProposition2(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: 1,000 seeded runs per setting: skipped under -short; go test ./... runs it")
	}
	const runs = 1000
	for _, tc := range []struct{ d, m int }{{2, 10}, {2, 20}, {3, 30}, {3, 67}, {5, 60}, {5, 200}} {
		want := 1 - math.Pow(1-20/math.Pow(float64(2*tc.d+1), 3), float64(tc.m))
		hits := 0
		for run := 0; run < runs; run++ {
			q := newStickyCells(t, tc.d, uint64(run*7919+tc.d*31+tc.m))
			res, err := attacks.PerturbationFinder.Run(context.Background(), q, cellsOptions(tc.m))
			if err != nil {
				t.Fatal(err)
			}
			if res.Recovered > int64(tc.d) {
				t.Fatalf("D=%d: guessed %d, above the true bound (noise escaped -D..D)", tc.d, res.Recovered)
			}
			if res.Recovered == int64(tc.d) {
				hits++
			}
		}
		got := float64(hits) / runs
		tol := 4.5 * math.Sqrt(want*(1-want)/runs)
		if math.Abs(got-want) > tol {
			t.Errorf("D=%d m=%d (t=%d): success %.3f, Proposition 2 says %.3f ± %.3f", tc.d, tc.m, 3*tc.m, got, want, tol)
		} else {
			t.Logf("D=%d m=%d (t=%d): success %.3f, Proposition 2 %.3f", tc.d, tc.m, 3*tc.m, got, want)
		}
	}
}
