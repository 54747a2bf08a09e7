package mechanisms

import (
	"context"
	"testing"

	"countwall/ir"
)

// TestAvgIntervalCoversTheTrueMean: an AVG's interval, built from its two
// noisy figures at half the miss rate each, holds the true (clamped,
// bounded) mean at least as often as its confidence says. Seeded noise,
// 2,000 answers a case: at 95% the coverage is expected at 95% or more, and
// the test asks for at least 93%, which a true coverage of 95% misses with
// probability below 1e-3 (binomial, n = 2,000); the intervals hold the
// published AVG too, and widen as the values are fewer.
func TestAvgIntervalCoversTheTrueMean(t *testing.T) {
	bounds := ir.ValueBounds{Min: 0, Max: 100}
	table := &ir.Table{Name: "t", Columns: map[string]*ir.Column{"v": {Name: "v", Type: ir.TypeReal, Bounds: &bounds}}}
	q := &ir.Query{Table: "t", Aggregates: []ir.Aggregate{{Func: ir.FuncAvg, Column: "v", Alias: "avg"}}}
	for _, name := range []string{"laplace", "gaussian"} {
		var widths []float64
		for _, tc := range []struct {
			n    int64
			mean float64
		}{{400, 30}, {40, 75}, {3, 10}} {
			m := newMechanismForTest(t, name, Params{"partition_selection": map[string]any{"enabled": false}}, 11)
			cell := ir.Cell{Count: tc.n, Units: tc.n, InDomain: true,
				Sums: []ir.SumValue{{N: tc.n, Float: tc.mean * float64(tc.n), Clamped: tc.mean * float64(tc.n)}}}
			req := &Request{Query: q, Table: table, Epsilon: 1, Delta: 1e-6, Bounds: ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1},
				Result: &ir.Result{Cells: []ir.Cell{cell}, Bounds: ir.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}}}
			const runs = 2000
			covered := 0
			var width float64
			for range runs {
				answers, _, err := m.Answer(context.Background(), req)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				iv := SumIntervals(m, req, answers[0], 0.95)
				if len(iv) != 1 || !iv[0].OK {
					t.Fatalf("%s n=%d: no AVG interval: %+v", name, tc.n, iv)
				}
				got := answers[0].Sums.Aggregates[0]
				if got < iv[0].Lo || got > iv[0].Hi {
					t.Fatalf("%s n=%d: published %g outside its interval [%g, %g]", name, tc.n, got, iv[0].Lo, iv[0].Hi)
				}
				if iv[0].Lo <= tc.mean && tc.mean <= iv[0].Hi {
					covered++
				}
				width += iv[0].Hi - iv[0].Lo
			}
			if covered < runs*93/100 {
				t.Errorf("%s n=%d: the interval held the true mean %d times in %d, want at least 93%%", name, tc.n, covered, runs)
			}
			t.Logf("%s n=%d: coverage %.3f, mean width %.3g", name, tc.n, float64(covered)/runs, width/runs)
			widths = append(widths, width/runs)
		}
		if !(widths[0] < widths[1] && widths[1] < widths[2]) {
			t.Errorf("%s: mean widths %v for 400, 40 and 3 values; want them wider as values are fewer", name, widths)
		}
	}
}
