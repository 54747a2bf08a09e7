package mechanisms

import (
	"math"
	"testing"

	"countwall/ir"
)

// TestZCDPBelowClassic: for the rho of 10 to 1,000 Gaussian answers at
// epsilon 0.1, delta 1e-6, the conversion is at least 10% below Bun and
// Steinke's closed form.
func TestZCDPBelowClassic(t *testing.T) {
	sigma, err := GaussianSigma(1, 1, 0.1, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []float64{10, 100, 1000} {
		rho := k * GaussianRho(1, 1, sigma)
		classic := rho + 2*math.Sqrt(rho*math.Log(1e5))
		if got := ir.ZCDPEpsilon(rho, 1e-5); got > 0.9*classic {
			t.Errorf("%g answers: %g, not 10%% below the classic %g", k, got, classic)
		}
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
	e100 := ir.ZCDPEpsilon(100*rho, 1e-5)
	e400 := ir.ZCDPEpsilon(400*rho, 1e-5)
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
