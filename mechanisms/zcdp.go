package mechanisms

import "math"

// ZCDPEpsilon is the epsilon of the (epsilon, delta)-DP guarantee implied by
// rho-zero-concentrated DP: rho + 2*sqrt(rho*ln(1/delta)) (Bun and Steinke,
// "Concentrated Differential Privacy: Simplifications, Extensions, and Lower
// Bounds", TCC 2016, Prop. 1.3). delta must be in (0, 1); outside it the
// result is +Inf (delta <= 0) or rho (delta >= 1, a vacuous delta).
func ZCDPEpsilon(rho, delta float64) float64 {
	switch {
	case rho <= 0:
		return 0
	case !(delta > 0):
		return math.Inf(1)
	case delta >= 1:
		return rho
	}
	return rho + 2*math.Sqrt(rho*math.Log(1/delta))
}

// GaussianRho is the zCDP cost of one Gaussian answer of standard deviation
// sigma to a query of sensitivities l0 cells and lInf per cell: Delta2^2 /
// (2 sigma^2) with Delta2^2 = l0*lInf^2 (Bun and Steinke, Prop. 1.6).
func GaussianRho(l0, lInf int64, sigma float64) float64 {
	d2 := float64(l0) * float64(lInf) * float64(lInf)
	return d2 / (2 * sigma * sigma)
}
