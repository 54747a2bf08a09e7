package mechanisms

import (
	"context"
	"testing"

	"countwall/ir"
)

// BDP (Lemma 4.5): exact when every record or none satisfies the
// predicate, noisy otherwise; a threshold is exact also when b < 0 or b >= n.
func TestBDPSensitivity(t *testing.T) {
	cases := []struct {
		name     string
		q        *ir.Query
		c, n     int64
		noisy    bool
		truthful float64
	}{
		{"none match", &ir.Query{}, 0, 10, false, 0},
		{"all match", &ir.Query{}, 10, 10, false, 10},
		{"some match", &ir.Query{}, 3, 10, true, 3},
		{"one of many", &ir.Query{}, 1, 1000, true, 1},
		{"all but one", &ir.Query{}, 999, 1000, true, 999},
		{"exists? none", &ir.Query{Threshold: &ir.Threshold{Bound: 0}}, 0, 10, false, 0},
		{"exists? all", &ir.Query{Threshold: &ir.Threshold{Bound: 0}}, 10, 10, false, 1},
		{"exists? some", &ir.Query{Threshold: &ir.Threshold{Bound: 0}}, 4, 10, true, 1},
		{"some, b < 0", &ir.Query{Threshold: &ir.Threshold{Bound: -1}}, 4, 10, false, 1},
		{"some, b = n", &ir.Query{Threshold: &ir.Threshold{Bound: 10}}, 4, 10, false, 0},
		{"some, b = n-1", &ir.Query{Threshold: &ir.Threshold{Bound: 9}}, 4, 10, true, 0},
	}
	m := newMechanismForTest(t, "bdp", nil, 1)
	for _, tc := range cases {
		a, charge := answerOne(t, m, tc.q, tc.c, tc.n, tinyEpsilon)
		if exact := isExact(a, tc.truthful); exact == tc.noisy {
			t.Errorf("%s: answer %v, want noisy=%v around %v", tc.name, a.Float, tc.noisy, tc.truthful)
		}
		if charge != (Charge{Kind: AccountingBDP, Epsilon: tinyEpsilon}) {
			t.Errorf("%s: charge %+v", tc.name, charge)
		}
	}
}

func TestBDPHistogram(t *testing.T) {
	cases := []struct {
		name   string
		counts []int64
		n      int64
		noisy  bool
	}{
		{"every record in one cell", []int64{0, 7, 0}, 7, false},
		{"no record matches", []int64{0, 0}, 7, false},
		{"two cells", []int64{3, 4}, 7, true},
		{"one cell and the rest", []int64{3, 0}, 7, true},
	}
	m := newMechanismForTest(t, "bdp", nil, 1)
	for _, tc := range cases {
		req := dpRequest(groupedCountQuery(nil), tinyEpsilon, 0, true, tc.counts...)
		req.Result.TableSize = tc.n
		answers, _, err := m.Answer(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range answers {
			if exact := isExact(a, float64(tc.counts[i])); exact == tc.noisy {
				t.Errorf("%s cell %d: %v, want noisy=%v", tc.name, i, a.Float, tc.noisy)
			}
		}
	}
	// The noise scale of a noisy count is 1/epsilon (20,000 draws, see
	// noise_test.go for the bounds).
	xs := make([]float64, noiseSampleLen)
	for i := range xs {
		a, _ := answerOne(t, m, &ir.Query{}, 30, 100, 0.25)
		xs[i] = a.Float
	}
	checkMoments(t, "bdp count", xs, 30, 2*4*4, 6)
	if f, ok := m.(interface{ FloatOutput() bool }); !ok || !f.FloatOutput() {
		t.Error("bdp does not declare float output")
	}
}
