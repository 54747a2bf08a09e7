package audit

import (
	"math"
	"testing"
)

// Reference values by bisection on the binomial CDF (independent of the Beta
// quantile used) and
// the closed form for k = 0, 1 - alpha^(1/n).
func TestClopperPearsonUpper(t *testing.T) {
	for _, tc := range []struct {
		k, n  int
		alpha float64
		want  float64
	}{
		{0, 1000, 0.05, 1 - math.Pow(0.05, 1.0/1000)},
		{0, 200, 0.00625, 1 - math.Pow(0.00625, 1.0/200)},
		{10, 10, 0.05, 1},
		{5, 0, 0.05, 1},
		{50, 100, 0.05, 0.5864}, // P(Bin(100, p) <= 50) = 0.05, by bisection on the binomial CDF
		{1, 20, 0.025, 0.2487},  // P(Bin(20, p) <= 1) = 0.025
	} {
		got := ClopperPearsonUpper(tc.k, tc.n, tc.alpha)
		if math.Abs(got-tc.want) > 5e-4 {
			t.Errorf("ClopperPearsonUpper(%d, %d, %g) = %.5f, want %.4f", tc.k, tc.n, tc.alpha, got, tc.want)
		}
	}
}

func TestEpsilonLowerBound(t *testing.T) {
	for _, tc := range []struct {
		name          string
		fpr, fnr, del float64
		want          float64
	}{
		{"perfect test, 1000 trials", 0.003, 0.003, 0, math.Log(0.997 / 0.003)},
		{"read the other way round", 0.01, 0.8, 0, math.Log(0.2 / 0.01)},
		{"delta eats the margin", 0.5, 0.5, 0.5, 0},
		{"a coin toss", 0.55, 0.55, 0, 0},
		{"nothing seen", 1, 1, 0, 0},
	} {
		if got := EpsilonLowerBound(tc.fpr, tc.fnr, tc.del); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: EpsilonLowerBound = %g, want %g", tc.name, got, tc.want)
		}
	}
}
