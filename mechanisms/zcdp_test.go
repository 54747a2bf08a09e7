package mechanisms

import (
	"math"
	"testing"
)

// TestZCDPEpsilon checks the conversion against the closed form
// rho + 2*sqrt(rho*ln(1/delta)) at hand-computed points, and its edges.
func TestZCDPEpsilon(t *testing.T) {
	cases := []struct {
		rho, delta, want float64
	}{
		// rho = 0.5, delta = 1e-5: 0.5 + 2*sqrt(0.5*11.512925465) = 5.298520...
		{0.5, 1e-5, 0.5 + 2*math.Sqrt(0.5*11.512925464970229)},
		{0.01, 1e-6, 0.01 + 2*math.Sqrt(0.01*13.815510557964274)},
		{1, math.Exp(-1), 3}, // 1 + 2*sqrt(1*1)
		{0.25, math.Exp(-4), 2.25},
		{0, 1e-5, 0},
		{0.3, 0, math.Inf(1)},
		{0.3, 1, 0.3},
	}
	for _, tc := range cases {
		if got := ZCDPEpsilon(tc.rho, tc.delta); math.Abs(got-tc.want) > 1e-12*math.Max(1, tc.want) && got != tc.want {
			t.Errorf("ZCDPEpsilon(%g, %g) = %.15g, want %.15g", tc.rho, tc.delta, got, tc.want)
		}
	}
	if got := ZCDPEpsilon(0.5, 1e-5); math.Abs(got-5.29852) > 1e-5 {
		t.Errorf("ZCDPEpsilon(0.5, 1e-5) = %g, want 5.29852", got)
	}
}

// TestGaussianAnswersComposeAsSqrtK: k Gaussian answers at (epsilon,
// delta) = (0.1, 1e-6) each cost, under zCDP at a delta cap of 1e-5, far less
// than k*0.1 once k is large, and grow about as sqrt(k).
func TestGaussianAnswersComposeAsSqrtK(t *testing.T) {
	sigma, err := GaussianSigma(1, 1, 0.1, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	rho := GaussianRho(1, 1, sigma)
	if want := 1 / (2 * sigma * sigma); rho != want {
		t.Fatalf("GaussianRho = %g, want %g", rho, want)
	}
	e100 := ZCDPEpsilon(100*rho, 1e-5)
	e400 := ZCDPEpsilon(400*rho, 1e-5)
	if e100 >= 100*0.1/2 {
		t.Errorf("100 answers cost epsilon %g under zCDP; basic composition says 10", e100)
	}
	// Four times the answers, about twice the epsilon (the rho term adds a
	// little more).
	if r := e400 / e100; r < 1.9 || r > 2.3 {
		t.Errorf("epsilon for 400 answers / for 100 = %g, want about 2", r)
	}
	if got := GaussianRho(4, 3, 2); got != 4*9/(2*4.0) {
		t.Errorf("GaussianRho(4, 3, 2) = %g", got)
	}
}
