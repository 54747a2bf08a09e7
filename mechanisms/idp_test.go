package mechanisms

import (
	"context"
	"testing"

	"countwall/ir"
	"countwall/pgerror"
)

// tinyEpsilon makes noise, when added, of scale >= 1e9: a noisy answer
// lands within 1e-3 of an integer with probability < 1e-11, so "exact" and
// "noisy" below are told apart with no practical chance of error (the
// seeded source makes the runs deterministic anyway).
const tinyEpsilon = 1e-9

func isExact(a Answer, want float64) bool { return a.IsFloat && a.Float == want }

func answerOne(t *testing.T, m Mechanism, q *ir.Query, count, n int64, eps float64) (Answer, Charge) {
	t.Helper()
	req := dpRequest(q, eps, 0, false, count)
	req.Result.TableSize = n
	answers, charge, err := m.Answer(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", m.Name(), err)
	}
	if len(answers) != 1 || !answers[0].IsFloat {
		t.Fatalf("%s: answers %+v, want one float", m.Name(), answers)
	}
	return answers[0], charge
}

// Each side of every boundary of Lemma 3.3: noisy exactly when
// max(c-k, 0) <= b < min(c+k, n).
func TestIDPThresholdBoundaries(t *testing.T) {
	cases := []struct {
		name       string
		c, n, b, k int64
		noisy      bool
	}{
		{"b < 0", 5, 10, -1, 1, false},
		{"b < 0, c = 0", 0, 10, -1, 1, false},
		{"b just below c-k", 5, 10, 3, 1, false},
		{"b = c-k", 5, 10, 4, 1, true},
		{"b = c+k-1", 5, 10, 5, 1, true},
		{"b = c+k", 5, 10, 6, 1, false},
		{"c = 0, b = 0", 0, 10, 0, 1, true},
		{"c = 0, b = k", 0, 10, 1, 1, false},
		{"k = 3, b = c-k-1", 5, 100, 1, 3, false},
		{"k = 3, b = c-k", 5, 100, 2, 3, true},
		{"k = 3, b = c+k-1", 5, 100, 7, 3, true},
		{"k = 3, b = c+k", 5, 100, 8, 3, false},
		{"k = 3, c < k, b = 0", 2, 100, 0, 3, true},
		{"k = 3, c+k > n, b = n-1", 9, 10, 9, 3, true},
		{"b = n", 9, 10, 10, 3, false},
		{"b > n", 9, 10, 11, 3, false},
		{"c = n = b+1, k = 2", 10, 10, 9, 2, true},
		{"c = n, b = c-k-1", 10, 10, 7, 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := idpThresholdSensitivity(tc.c, tc.n, tc.b, tc.k) == 1; got != tc.noisy {
				t.Fatalf("sensitivity rule: noisy = %v, want %v", got, tc.noisy)
			}
			for _, plusOne := range []bool{false, true} {
				m := newMechanismForTest(t, "idp", Params{"k": tc.k, "plus_one": plusOne}, 1)
				q := &ir.Query{Threshold: &ir.Threshold{Bound: tc.b}}
				a, charge := answerOne(t, m, q, tc.c, tc.n, tinyEpsilon)
				truth := 0.0
				if tc.c > tc.b {
					truth = 1
				}
				wantNoisy := tc.noisy || plusOne
				if exact := isExact(a, truth); exact == wantNoisy {
					t.Errorf("plus_one=%v: answer %v, want noisy=%v around %v", plusOne, a.Float, wantNoisy, truth)
				}
				if charge != (Charge{Kind: AccountingIDP, Epsilon: tinyEpsilon}) {
					t.Errorf("charge %+v", charge)
				}
			}
		})
	}
}

func TestIDPCountSensitivity(t *testing.T) {
	cases := []struct {
		c, n, k int64
		want    float64
	}{
		{5, 10, 1, 1}, {5, 10, 3, 3}, {0, 10, 3, 3}, {10, 10, 50, 10}, {4, 10, 50, 6}, {0, 0, 2, 0},
	}
	for _, tc := range cases {
		if got := idpCountSensitivity(tc.c, tc.n, tc.k); got != tc.want {
			t.Errorf("c=%d n=%d k=%d: %v, want %v", tc.c, tc.n, tc.k, got, tc.want)
		}
	}
	// An empty table: sensitivity 0, the exact count goes out.
	m := newMechanismForTest(t, "idp", nil, 1)
	if a, _ := answerOne(t, m, &ir.Query{}, 0, 0, tinyEpsilon); !isExact(a, 0) {
		t.Errorf("empty table: %+v, want exactly 0", a)
	}
}

// The noise scale is sensitivity/epsilon: a plain count with k = 3 has
// scale 3/epsilon, plus_one makes it 4/epsilon, a GROUP BY histogram 2k =
// 6/epsilon (see noise_test.go for the bounds: 20,000 draws, 1e-6
// false-failure rate per check).
func TestIDPNoiseScale(t *testing.T) {
	const eps = 0.5
	cases := []struct {
		name  string
		p     Params
		q     *ir.Query
		scale float64
	}{
		{"count k=3", Params{"k": 3}, &ir.Query{}, 3 / eps},
		{"count k=3 plus_one", Params{"k": 3, "plus_one": true}, &ir.Query{}, 4 / eps},
		{"histogram k=3", Params{"k": 3}, groupedCountQuery(nil), 6 / eps},
	}
	for _, tc := range cases {
		m := newMechanismForTest(t, "idp", tc.p, 2)
		xs := make([]float64, noiseSampleLen)
		for i := range xs {
			req := dpRequest(tc.q, eps, 0, true, 50)
			req.Result.TableSize = 100
			answers, _, err := m.Answer(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			xs[i] = answers[0].Float
		}
		checkMoments(t, "idp "+tc.name, xs, 50, 2*tc.scale*tc.scale, 6)
	}
}

func TestIDPGroupByAndParams(t *testing.T) {
	m := newMechanismForTest(t, "idp", nil, 1)
	if m.Needs() != (ir.Needs{TableSize: true}) {
		t.Errorf("Needs = %+v", m.Needs())
	}
	if f, ok := m.(interface{ FloatOutput() bool }); !ok || !f.FloatOutput() {
		t.Error("idp does not declare float output")
	}
	req := dpRequest(groupedCountQuery(nil), 1, 0, false, 1, 2)
	req.Result.TableSize = 3
	_, _, err := m.Answer(context.Background(), req)
	wantPlannerError(t, err, pgerror.FeatureNotSupported)
	// A threshold GROUP BY thresholds the noisy counts; answers stay floats.
	req = dpRequest(groupedCountQuery(&ir.Threshold{Bound: 5}), MaxEpsilon, 0, true, 1, 20)
	req.Result.TableSize = 21
	answers, _, err := m.Answer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// Scale 2/100: |noise| >= 4 has probability exp(-200).
	if !isExact(answers[0], 0) || !isExact(answers[1], 1) {
		t.Errorf("threshold GROUP BY: %+v, want floats 0 and 1", answers)
	}
	for _, p := range []Params{{"k": 0}, {"k": -1}, {"k": 2.5}, {"plus_one": "maybe"}, {"epsilon": 1}} {
		if _, err := New("idp", p, Env{Seed: 1}); err == nil {
			t.Errorf("idp accepted %v", p)
		}
	}
}
