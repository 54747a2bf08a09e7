package mechanisms

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"countwall/ir"
)

func TestBoundedExactCases(t *testing.T) {
	sup := Answer{Suppressed: true}
	tests := []struct {
		name   string
		p      Params
		q      *ir.Query
		counts []int64
		want   []Answer
	}{
		{"range 0 is exact", Params{"range": 0}, groupedCountQuery(nil),
			[]int64{0, 1, 42}, []Answer{{Int: 0}, {Int: 1}, {Int: 42}}},
		{"suppression withholds counts <= s, zero cells too", Params{"range": 0, "suppress_at": 4}, groupedCountQuery(nil),
			[]int64{0, 4, 5}, []Answer{sup, sup, {Int: 5}}},
		{"threshold query compares the noisy count", Params{"range": 0}, groupedCountQuery(&ir.Threshold{Bound: 9}),
			[]int64{9, 10}, []Answer{{Int: 0}, {Int: 1}}},
		{"threshold query on a suppressed cell", Params{"range": 2, "suppress_at": 4}, &ir.Query{Threshold: &ir.Threshold{Bound: -1}},
			[]int64{3}, []Answer{sup}},
		{"COUNT(DISTINCT unit)", Params{"range": 0}, &ir.Query{Agg: ir.CountDistinct},
			[]int64{12}, []Answer{{Int: 12}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMechanismForTest(t, "bounded", tt.p, 1)
			got := answerWithoutCharge(t, m, countCellsRequest(tt.q, tt.counts...))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The same cell asked 200 times gets fresh noise every time: the answers
// stay within [count-r, count+r] (clamped at 0) and are not all equal.
// Under correct behaviour all 200 answers are equal with probability
// 5 * (1/5)^200 < 1e-138 for r = 2 and a count away from 0; for count 1 the
// clamped answers take 4 values, the likeliest with probability 2/5, so all
// equal has probability < 4 * (2/5)^200 < 1e-78. Each run also checks that
// every value of the range occurs (missing one has probability
// < 5 * (4/5)^200 < 3e-19), and that 0 occurs for count 1 (clamping).
func TestBoundedFreshNoise(t *testing.T) {
	const repeats, r = 200, 2
	for _, seed := range []int64{0, 1, 2} { // 0: keyed from crypto/rand
		m := newMechanismForTest(t, "bounded", Params{"range": r}, seed)
		for _, count := range []int64{1, 30} {
			seen := map[int64]int{}
			for range repeats {
				a := answerWithoutCharge(t, m, countCellsRequest(&ir.Query{}, count))[0]
				if a.IsFloat || a.Suppressed || a.Dropped {
					t.Fatalf("seed %d count %d: answer %+v, want a plain integer", seed, count, a)
				}
				if lo, hi := max(count-r, 0), count+r; a.Int < lo || a.Int > hi {
					t.Fatalf("seed %d count %d: answer %d outside [%d, %d]", seed, count, a.Int, lo, hi)
				}
				seen[a.Int]++
			}
			for v := max(count-r, 0); v <= count+r; v++ {
				if seen[v] == 0 {
					t.Errorf("seed %d count %d: %d answers never gave %d (seen %v)", seed, count, repeats, v, seen)
				}
			}
		}
	}
}

// The noise of 20,000 draws for count 50 with r = 3 is uniform on -3..3 by a
// chi-square test at alpha = 1e-4 (df = 6, critical value 27.86): a correct
// mechanism fails with probability 1e-4 per seed; the seed is fixed, so the
// run is reproducible.
func TestBoundedNoiseIsUniform(t *testing.T) {
	const n, r, count = 20000, 3, 50
	m := newMechanismForTest(t, "bounded", Params{"range": r}, 7)
	counts := make([]float64, 2*r+1)
	req := countCellsRequest(groupedCountQuery(nil), repeatedCounts(count, n)...)
	for _, a := range answerWithoutCharge(t, m, req) {
		counts[a.Int-count+r]++
	}
	probs := make([]float64, 2*r+1)
	for k := range probs {
		probs[k] = 1.0 / float64(2*r+1)
	}
	assertChiSquareFit(t, "bounded r=3", counts, probs, n)
}

func TestBoundedSeedReproducibleAndConcurrent(t *testing.T) {
	req := countCellsRequest(groupedCountQuery(nil), repeatedCounts(100, 50)...)
	a := answerWithoutCharge(t, newMechanismForTest(t, "bounded", Params{"range": 5}, 42), req)
	b := answerWithoutCharge(t, newMechanismForTest(t, "bounded", Params{"range": 5}, 42), req)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed gave different answers:\n%v\n%v", a, b)
	}

	// One mechanism serves every session: answer from 8 goroutines at once
	// (run with -race to check the generator's guard).
	m := newMechanismForTest(t, "bounded", Params{"range": 5}, 0)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				answers, _, err := m.Answer(context.Background(), req)
				if err != nil {
					errs <- err
					return
				}
				for _, x := range answers {
					if x.Int < 95 || x.Int > 105 {
						errs <- fmt.Errorf("answer %d outside [95, 105]", x.Int)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestBoundedDescribe(t *testing.T) {
	hidden := newMechanismForTest(t, "bounded", Params{"range": 3}, 1).(Describer).Describe()
	if strings.Contains(hidden, "range 3") {
		t.Errorf("range published without publish_parameters: %q", hidden)
	}
	shown := newMechanismForTest(t, "bounded", Params{"range": 3, "suppress_at": 4, "publish_parameters": true}, 1).(Describer).Describe()
	if !strings.Contains(shown, "(range 3, counts <= 4 published as 0)") {
		t.Errorf("publish_parameters claim %q does not show the parameters", shown)
	}
}

func TestAddNoiseClampedAtZero(t *testing.T) {
	tests := []struct{ count, noise, want int64 }{
		{5, -2, 3},
		{1, -2, 0},
		{0, 2, 2},
		{math.MaxInt64 - 1, 2, math.MaxInt64},
	}
	for _, tt := range tests {
		if got := addNoiseClampedAtZero(tt.count, tt.noise); got != tt.want {
			t.Errorf("addNoiseClampedAtZero(%d, %d) = %d, want %d", tt.count, tt.noise, got, tt.want)
		}
	}
}

// repeatedCounts returns n copies of v.
func repeatedCounts(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// assertChiSquareFit tests observed category counts against probabilities with
// Pearson's chi-square at alpha = 1e-4: the critical value is the 1-1e-4
// quantile of the chi-square distribution with len(probs)-1 degrees of
// freedom (18.42 for df = 2, 21.11 for df = 3, 23.51 for df = 4, 27.86 for
// df = 6). A correct mechanism fails each such test with probability 1e-4.
// Every expected count must be at least 5 for the approximation to hold;
// callers choose n accordingly.
func assertChiSquareFit(t *testing.T, what string, observed, probs []float64, n int) {
	t.Helper()
	const alpha = 1e-4
	stat := 0.0
	for k, p := range probs {
		expected := p * float64(n)
		if expected < 5 {
			t.Fatalf("%s: expected count %.1f in category %d is too small for a chi-square test", what, expected, k)
		}
		d := observed[k] - expected
		stat += d * d / expected
	}
	critical := distuv.ChiSquared{K: float64(len(probs) - 1)}.Quantile(1 - alpha)
	if stat > critical {
		t.Errorf("%s: chi-square %.2f > critical %.2f (df %d, alpha %g); observed %v, probabilities %v",
			what, stat, critical, len(probs)-1, alpha, observed, probs)
	}
}
