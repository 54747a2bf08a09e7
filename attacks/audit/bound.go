package audit

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// ClopperPearsonUpper is the one-sided upper confidence bound, at confidence
// 1-alpha, on a rate observed as k events in n trials: the p at which seeing
// k or fewer events has probability alpha. It is exact (never below the
// nominal confidence), which is what a lower bound on epsilon needs.
func ClopperPearsonUpper(k, n int, alpha float64) float64 {
	if n <= 0 || k >= n {
		return 1
	}
	return distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - alpha)
}

// EpsilonLowerBound is the privacy loss a test with these error rates
// demonstrates: any (epsilon, delta)-DP mechanism has
// FPR + e^epsilon * FNR >= 1 - delta for every test, so
// epsilon >= ln((1 - delta - FPR) / FNR), and likewise with the rates
// swapped (the test read the other way round). The rates are replaced by
// their upper confidence bounds, so the result holds at the confidence those
// bounds carry. It is 0 when the test shows nothing.
func EpsilonLowerBound(fprUpper, fnrUpper, delta float64) float64 {
	best := 0.0
	for _, r := range [][2]float64{{fprUpper, fnrUpper}, {fnrUpper, fprUpper}} {
		num, den := 1-delta-r[0], r[1]
		if num <= 0 || den <= 0 {
			continue
		}
		best = math.Max(best, math.Log(num/den))
	}
	return best
}
