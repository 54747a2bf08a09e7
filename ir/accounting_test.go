package ir

import (
	"math"
	"testing"
)

// gaussianExactEpsilon is the exact epsilon at delta of one Gaussian
// answer whose sensitivity is mu standard deviations (rho = mu^2/2), from
// its privacy profile delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 -
// eps/mu) (Balle and Wang 2018, Thm. 8), by bisection.
func gaussianExactEpsilon(rho, delta float64) float64 {
	mu := math.Sqrt(2 * rho)
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	profile := func(eps float64) float64 { return phi(mu/2-eps/mu) - math.Exp(eps)*phi(-mu/2-eps/mu) }
	lo, hi := 0.0, 1000.0
	for range 200 {
		mid := (lo + hi) / 2
		if profile(mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// cksGrid minimises the same bound as cksEpsilon on a fine grid of alpha,
// independently of its search.
func cksGrid(rho, delta float64) float64 {
	best := math.Inf(1)
	for alpha := 1.000001; alpha < 1e9; alpha *= 1.0005 {
		e := alpha*rho + (math.Log(1/delta)+(alpha-1)*math.Log(1-1/alpha)-math.Log(alpha))/(alpha-1)
		best = min(best, e)
	}
	return best
}

// TestZCDPEpsilon checks the conversion three ways: against a grid search
// of the Canonne-Kamath-Steinke bound (the optimiser), against the exact
// epsilon of a Gaussian answer with that rho (the bound must never be
// below it: it holds for every rho-zCDP mechanism, the Gaussian included),
// and against Bun and Steinke's closed form (never above it).
func TestZCDPEpsilon(t *testing.T) {
	for _, tc := range []struct{ rho, delta float64 }{
		{0.5, 1e-5}, {0.01, 1e-5}, {0.1, 1e-6}, {1, 1e-5}, {0.0049, 1e-5}, {5, 1e-5}, {1e-6, 1e-9}, {20, 1e-3},
	} {
		got := ZCDPEpsilon(tc.rho, tc.delta)
		classic := tc.rho + 2*math.Sqrt(tc.rho*math.Log(1/tc.delta))
		if grid := cksGrid(tc.rho, tc.delta); math.Abs(got-min(grid, classic)) > 1e-6*math.Max(1, got) {
			t.Errorf("ZCDPEpsilon(%g, %g) = %.9g, the grid search finds %.9g", tc.rho, tc.delta, got, grid)
		}
		if exact := gaussianExactEpsilon(tc.rho, tc.delta); got < exact-1e-9 {
			t.Errorf("ZCDPEpsilon(%g, %g) = %.9g is below the exact Gaussian epsilon %.9g: not a valid bound", tc.rho, tc.delta, got, exact)
		}
		if got > classic {
			t.Errorf("ZCDPEpsilon(%g, %g) = %.9g, above the classic %.9g", tc.rho, tc.delta, got, classic)
		}
	}
	// Hand-checked points (the grid's values to 6 digits).
	for _, tc := range []struct{ rho, delta, want float64 }{{0.5, 1e-5, 4.72839}, {0.01, 1e-5, 0.545726}} {
		if got := ZCDPEpsilon(tc.rho, tc.delta); math.Abs(got-tc.want) > 1e-5 {
			t.Errorf("ZCDPEpsilon(%g, %g) = %.7g, want %g", tc.rho, tc.delta, got, tc.want)
		}
	}
	for _, tc := range []struct{ rho, delta, want float64 }{{0, 1e-5, 0}, {0.3, 0, math.Inf(1)}, {0.3, 1, 0.3}, {0.001, 0.5, 0}} {
		if got := ZCDPEpsilon(tc.rho, tc.delta); got != tc.want {
			t.Errorf("ZCDPEpsilon(%g, %g) = %g, want %g", tc.rho, tc.delta, got, tc.want)
		}
	}
}
