package mechanisms

// GaussianRho is the zCDP cost of one Gaussian answer of standard deviation
// sigma to a query of sensitivities l0 cells and lInf per cell: Delta2^2 /
// (2 sigma^2) with Delta2^2 = l0*lInf^2 (Bun and Steinke, Prop. 1.6).
func GaussianRho(l0, lInf int64, sigma float64) float64 {
	d2 := float64(l0) * float64(lInf) * float64(lInf)
	return d2 / (2 * sigma * sigma)
}
