package ir

import "math"

// Accounting is the kind of privacy loss a mechanism claims per answer.
// Kinds are kept apart in the ledger: an IDP claim is not a DP charge.
type Accounting string

const (
	AccountingNone Accounting = ""
	AccountingDP   Accounting = "dp"
	AccountingIDP  Accounting = "idp"
	AccountingBDP  Accounting = "bdp"
)

// Charge is what answering a request costs under the mechanism's accounting.
type Charge struct {
	Kind    Accounting
	Epsilon float64
	Delta   float64
	// Rho is a zero-concentrated DP cost (Bun and Steinke 2016), charged to
	// the Kind's budget by summing rho and converting the sum to (epsilon,
	// delta) against the cap (ZCDPEpsilon). Epsilon and Delta are then usually
	// 0.
	Rho float64
}

// MaxDelta is the largest per-query delta any mechanism accepts (the
// Gaussian noise source's edge): the ledger converts zCDP spending at it
// when an analyst's delta cap is unlimited.
const MaxDelta = 0.5

// ZCDPEpsilon is the epsilon of the (epsilon, delta)-DP guarantee implied by
// rho-zero-concentrated DP, by the conversion of Canonne, Kamath and Steinke
// ("The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Prop. 12
// with the Renyi curve alpha*rho of rho-zCDP):
//
//	epsilon = inf over alpha > 1 of  alpha*rho + (ln(1/delta) + (alpha-1)*ln(1-1/alpha) - ln(alpha)) / (alpha-1)
//
// which is never more, and for the rho a budget holds 10-25% less, than Bun
// and Steinke's rho + 2*sqrt(rho*ln(1/delta)) (TCC 2016, Prop. 1.3); the
// smaller of the two is returned, never below 0. delta must be in (0, 1);
// outside it the result is +Inf (delta <= 0) or rho (delta >= 1, a vacuous
// delta).
func ZCDPEpsilon(rho, delta float64) float64 {
	switch {
	case rho <= 0:
		return 0
	case !(delta > 0):
		return math.Inf(1)
	case delta >= 1:
		return rho
	}
	classic := rho + 2*math.Sqrt(rho*math.Log(1/delta))
	return max(0, min(classic, cksEpsilon(rho, delta)))
}

// cksBracket is the width on t = ln(alpha - 1) at which cksEpsilon's
// search stops: the bound is flat at its minimum, so a narrower bracket
// changes the result by less than a part in 10^13, and every alpha gives a
// valid bound. The conversion runs on every zCDP charge; this keeps it to
// about 50 evaluations of the bound where 200 were made.
const cksBracket = 1e-9

// cksEpsilon minimises the Canonne-Kamath-Steinke bound over alpha, by a
// golden-section search over t = ln(alpha - 1), in which the bound is
// unimodal; the optimum lies near alpha = 1 + sqrt(ln(1/delta)/rho), well
// inside the range searched for every rho in [1e-15, 1e6].
func cksEpsilon(rho, delta float64) float64 {
	f := func(t float64) float64 {
		am1 := math.Exp(t) // alpha - 1
		alpha := am1 + 1
		return alpha*rho + (math.Log(1/delta)+am1*math.Log1p(-1/alpha)-math.Log(alpha))/am1
	}
	lo, hi := -20.0, 40.0
	const phi = 0.6180339887498949
	a, b := hi-phi*(hi-lo), lo+phi*(hi-lo)
	fa, fb := f(a), f(b)
	for range 200 {
		if hi-lo < cksBracket {
			break
		}
		if fa < fb {
			hi, b, fb = b, a, fa
			a = hi - phi*(hi-lo)
			fa = f(a)
		} else {
			lo, a, fa = a, b, fb
			b = lo + phi*(hi-lo)
			fb = f(b)
		}
	}
	return min(fa, fb)
}
