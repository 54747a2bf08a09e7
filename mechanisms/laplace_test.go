package mechanisms

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"countwall/ir"
	"countwall/pgerror"
)

// dpRequest is a request with the given budget share over cells with the
// given counts.
func dpRequest(q *ir.Query, eps, delta float64, domainComplete bool, counts ...int64) *Request {
	req := countCellsRequest(q, counts...)
	req.Epsilon, req.Delta = eps, delta
	req.Result.DomainComplete = domainComplete
	return req
}

func wantPlannerError(t *testing.T, err error, code pgerror.Code) {
	t.Helper()
	var pe *pgerror.Error
	if !errors.As(err, &pe) || pe.Code != code {
		t.Fatalf("got error %v, want a *pgerror.Error with SQLSTATE %s", err, code)
	}
}

func TestLaplaceAndGaussianAnswers(t *testing.T) {
	plain := &ir.Query{Table: "people"}
	for _, name := range []string{"laplace", "gaussian"} {
		m := newMechanismForTest(t, name, Params{"partition_selection": map[string]any{"enabled": false}}, 1)
		if m.Needs() != (ir.Needs{Bound: true}) {
			t.Errorf("%s needs %+v; it uses the count bounded per unit only", name, m.Needs())
		}
		if a, ok := m.(Accounter); !ok || a.Accounting() != AccountingDP {
			t.Errorf("%s does not declare dp accounting", name)
		}
		// GROUP BY without declared domains is refused without partition
		// selection, nothing charged (partition_test.go has it with).
		_, charge, err := m.Answer(context.Background(), dpRequest(groupedCountQuery(nil), 0.5, 1e-6, false, 3, 4))
		wantPlannerError(t, err, pgerror.FeatureNotSupported)
		if charge != (Charge{}) {
			t.Errorf("%s charged %+v for a refused query", name, charge)
		}
		// Domain-complete GROUP BY: every cell noised, one charge.
		answers, charge, err := m.Answer(context.Background(), dpRequest(groupedCountQuery(nil), 0.5, 1e-6, true, 0, 5, 1000))
		if err != nil {
			t.Fatal(err)
		}
		want := Charge{Kind: AccountingDP, Epsilon: 0.5}
		if name == "gaussian" {
			// zCDP: rho = Delta2^2/(2 sigma^2) replaces (epsilon, delta).
			sigma, _ := GaussianSigma(1, 1, 0.5, 1e-6)
			want = Charge{Kind: AccountingDP, Rho: 1 / (2 * sigma * sigma)}
		}
		if charge != want {
			t.Errorf("%s charged %+v, want %+v", name, charge, want)
		}
		for i, a := range answers {
			if a.IsFloat || a.Dropped || a.Suppressed || a.Int < 0 {
				t.Errorf("%s cell %d: %+v, want a non-negative integer", name, i, a)
			}
		}
		// Out-of-range shares are refused with 22023.
		_, _, err = m.Answer(context.Background(), dpRequest(plain, 0, 1e-6, false, 5))
		wantPlannerError(t, err, pgerror.InvalidParameterValue)
		_, _, err = m.Answer(context.Background(), dpRequest(plain, math.NaN(), 1e-6, false, 5))
		wantPlannerError(t, err, pgerror.InvalidParameterValue)
	}
	// Gaussian needs delta; Laplace ignores it and charges none.
	g := newMechanismForTest(t, "gaussian", nil, 1)
	_, _, err := g.Answer(context.Background(), dpRequest(plain, 1, 0, false, 5))
	wantPlannerError(t, err, pgerror.InvalidParameterValue)
	l := newMechanismForTest(t, "laplace", nil, 1)
	_, charge, err := l.Answer(context.Background(), dpRequest(plain, 1, 0.3, false, 5))
	if err != nil || charge != (Charge{Kind: AccountingDP, Epsilon: 1}) {
		t.Errorf("laplace: charge %+v, %v", charge, err)
	}
}

// At epsilon = 100 the Laplace noise has scale 0.01, and a draw is >= 0.5 in
// size (so that rounding moves the count) with probability exp(-50) < 2e-22:
// the answers below are exact on every run, with the real library too.
func TestLaplaceThresholdsTheNoisyCount(t *testing.T) {
	for _, env := range []Env{{Seed: 1}, {}} {
		m, err := New("laplace", nil, env)
		if err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			bound, count, want int64
		}{{9, 10, 1}, {10, 10, 0}, {-1, 0, 1}, {0, 0, 0}}
		for _, c := range cases {
			q := &ir.Query{Threshold: &ir.Threshold{Bound: c.bound}}
			answers, _, err := m.Answer(context.Background(), dpRequest(q, MaxEpsilon, 0, false, c.count))
			if err != nil {
				t.Fatal(err)
			}
			if answers[0] != (Answer{Int: c.want}) {
				t.Errorf("COUNT(*) > %d with count %d: %+v, want %d", c.bound, c.count, answers[0], c.want)
			}
		}
	}
}

// Through the mechanism, Laplace answers have scale 1/epsilon and Gaussian
// answers the documented sigma (see noise_test.go for the bounds: 20,000
// draws, 1e-6 false-failure rate per check). The count is large enough
// that clamping at 0 never happens (P < 1e-40).
func TestLaplaceAndGaussianScaleThroughMechanism(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: 20,000 answers per mechanism: skipped under -short; go test ./... runs it")
	}
	const eps, delta, count = 0.5, 1e-5, 1000
	q := &ir.Query{Table: "people"}
	sigma, err := GaussianSigma(1, 1, eps, delta)
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []Env{{Seed: 5}, {}} {
		for name, want := range map[string]float64{"laplace": roundedLaplaceVariance(1 / eps), "gaussian": sigma*sigma + 1.0/12} {
			m, err := New(name, nil, env)
			if err != nil {
				t.Fatal(err)
			}
			xs := make([]float64, noiseSampleLen)
			for i := range xs {
				answers, _, err := m.Answer(context.Background(), dpRequest(q, eps, delta, false, count))
				if err != nil {
					t.Fatal(err)
				}
				xs[i] = float64(answers[0].Int)
			}
			kurtosis := 6.0
			if name == "gaussian" {
				kurtosis = 3
			}
			checkMoments(t, name+" answers", xs, count, want, kurtosis)
		}
	}
}

func TestLaplaceRefusesUnknownParams(t *testing.T) {
	for _, name := range []string{"laplace", "gaussian", "bdp"} {
		if _, err := New(name, Params{"epsilon": 0.1}, Env{Seed: 1}); err == nil {
			t.Errorf("%s accepted an unknown parameter", name)
		}
	}
}

// BenchmarkLaplaceDraw is one secure Laplace draw for a count from the DP
// library, with the long table's bounds (G = 8 cells a person, C = 3 rows
// a cell): what laplace adds per cell of a GROUP BY beyond the counting.
//
//	go test ./mechanisms -run '^$' -bench LaplaceDraw
func BenchmarkLaplaceDraw(b *testing.B) {
	noise := LibraryNoise()
	for _, epsilon := range []float64{0.001, 0.1, 1} {
		b.Run(fmt.Sprint("epsilon=", epsilon), func(b *testing.B) {
			for b.Loop() {
				if _, err := noise.AddLaplace(100, 8, 3, epsilon); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
