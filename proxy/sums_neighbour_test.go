package proxy

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"countwall/ir"
	"countwall/mechanisms"
	"countwall/planner/plan"
)

// The neighbouring-databases test of SUM and AVG under laplace and gaussian,
// as TestRemovingAPersonMovesAnswersByAtMostEpsilon does for counts: 30
// background people with one value each, and a target person with r rows
// (r = 1, 5) of 5000, above the bound 1000 (so at the bound once clamped),
// in one cell or in r cells, against the same table without them. Each
// world's bounded sums are computed once by the planner and answered N =
// 20,000 times with seeded noise; the statistic is the total of the
// answers. For 41 thresholds at the pooled sample's quantiles, the events
// {statistic >= t} and their complements, in both directions, reject the
// claim when the Clopper-Pearson lower bound of one probability, less
// delta, exceeds e^epsilon times the upper bound of the other (alpha =
// 1e-8 each). 164 comparisons per case and 16 cases make the family-wise
// false-failure rate below 2 * 2624 * 1e-8 = 5.3e-5. The power check
// answers the unbounded clamped sums under the claimed bounds and must be
// caught.
func TestRemovingAPersonMovesSumsByAtMostEpsilon(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: answer distributions with and without a person: skipped under -short; go test ./... runs it")
	}
	const epsilon, delta = 1.0, 1e-6
	dir := t.TempDir()
	var background [][3]int
	for p := 1; p <= 30; p++ {
		background = append(background, [3]int{p, p % 10, p * 20})
	}
	without := writeLongTable(t, dir, "without.db", background)
	table := &ir.Table{Name: "genomes", PrivacyUnit: "person", Policy: ir.DefaultPolicy(),
		Columns: map[string]*ir.Column{
			"person": {Name: "person", Type: ir.TypeInt},
			"snp":    {Name: "snp", Type: ir.TypeInt, Domain: &ir.Domain{IsRange: true, Min: 0, Max: 9}},
			"allele": {Name: "allele", Type: ir.TypeInt, Bounds: &ir.ValueBounds{Min: -100, Max: 1000}},
		}}
	for _, fn := range []ir.AggFunc{ir.FuncSum, ir.FuncAvg} {
		agg := []ir.Aggregate{{Func: fn, Column: "allele", Alias: fn.String()}}
		plain := &ir.Query{Table: "genomes", Aggregates: agg}
		bySnp := &ir.Query{Table: "genomes", GroupBy: []string{"snp"}, Aggregates: []ir.Aggregate{{Func: fn, Column: "allele", Alias: fn.String(), Position: 1}}}
		for _, r := range []int{1, 5} {
			for _, spread := range []bool{false, true} {
				rows := append([][3]int(nil), background...)
				for i := range r {
					snp := 7
					if spread {
						snp = i
					}
					rows = append(rows, [3]int{1000, snp, 5000})
				}
				with := writeLongTable(t, dir, fmt.Sprintf("with-%s-%d-%v.db", fn, r, spread), rows)
				for _, mech := range []string{"laplace", "gaussian"} {
					q, params := plain, mechanisms.Params(nil)
					if spread {
						q, params = bySnp, mechanisms.Params{"max_rows_per_unit": 3, "max_groups_per_unit": 2}
					}
					name := fmt.Sprintf("%s %s r=%d spread=%v", mech, fn, r, spread)
					m, err := mechanisms.New(mech, params, mechanisms.Env{Seed: int64(r*10 + len(params) + 1)})
					if err != nil {
						t.Fatal(err)
					}
					a := sumNeighbourSample(t, with, table, q, m, epsilon, delta, false)
					b := sumNeighbourSample(t, without, table, q, m, epsilon, delta, false)
					if worst, bad := violatesFloat(a, b, epsilon, delta); bad {
						t.Errorf("%s: a lower bound on the privacy loss is %.3f > %g", name, worst, epsilon)
					}
					if r == 5 && !spread && fn == ir.FuncSum {
						a := sumNeighbourSample(t, with, table, q, m, epsilon, delta, true)
						if worst, bad := violatesFloat(a, b, epsilon, delta); !bad {
							t.Errorf("%s: the test did not catch unbounded sums (loss bound %.3f)", name, worst)
						}
					}
				}
			}
		}
	}
}

// sumNeighbourSample answers q N times over the bounded sums of the
// database at path and returns the total of each run's SUM or AVG. lie
// answers the clamped sums without per-person bounds under the claimed
// bounds: the test's power check.
func sumNeighbourSample(t *testing.T, path string, table *ir.Table, q *ir.Query, m mechanisms.Mechanism, epsilon, delta float64, lie bool) []float64 {
	t.Helper()
	s, err := OpenStore(path, plan.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	secret := []byte("neighbour test secret")
	res, err := s.Run(context.Background(), table, q, m.Needs(), secret)
	if err != nil {
		t.Fatal(err)
	}
	if lie {
		raw, err := s.Run(context.Background(), table, q, ir.Needs{Clamp: true}, secret)
		if err != nil {
			t.Fatal(err)
		}
		raw.Bounds = res.Bounds
		res = raw
	}
	out := make([]float64, dpTestDraws)
	req := &mechanisms.Request{Query: q, Table: table, Result: res, Epsilon: epsilon, Delta: delta}
	for i := range out {
		answers, _, err := m.Answer(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range answers {
			if !a.Dropped {
				out[i] += a.Sums.Aggregates[0]
			}
		}
	}
	return out
}

// violatesFloat reports the worst evidence against (epsilon, delta)-DP
// between two samples, as a lower bound on epsilon, and whether it exceeds
// epsilon: P[A] <= e^epsilon P[B] + delta must hold for every event.
func violatesFloat(with, without []float64, epsilon, delta float64) (worst float64, rejected bool) {
	pooled := slices.Concat(with, without)
	slices.Sort(pooled)
	n := len(with)
	for k := 1; k <= 41; k++ {
		thr := pooled[len(pooled)*k/42]
		var a, b int
		for i := range n {
			if with[i] >= thr {
				a++
			}
			if without[i] >= thr {
				b++
			}
		}
		for _, pair := range [][2]int{{a, b}, {b, a}, {n - a, n - b}, {n - b, n - a}} {
			lo, _ := clopperPearson(pair[0], n, dpTestAlpha)
			_, hi := clopperPearson(pair[1], n, dpTestAlpha)
			if lo-delta > 0 && hi > 0 {
				worst = math.Max(worst, math.Log((lo-delta)/hi))
			}
		}
	}
	return worst, worst > epsilon
}
