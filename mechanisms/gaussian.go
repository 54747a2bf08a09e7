package mechanisms

import (
	"countwall/pgerror"
)

func init() {
	Register("gaussian", func(p Params, env Env) (Mechanism, error) { return newGaussian(p, env) })
}

// gaussian is (epsilon, delta)-differential privacy per person: the same
// bounded counts, domain rule and integer answers as laplace (dpCount), with
// Gaussian noise (rounded to integers) whose standard deviation is
// GaussianSigma(G, C, epsilon, delta), the tight analytic calibration of
// Balle and Wang (2018) for L2 sensitivity sqrt(G)*C, as Google's library
// computes it. For epsilon = 1, delta = 1e-5 and G = C = 1 that sigma is
// about 3.73; the classical bound sqrt(2 ln(1.25/delta))/epsilon of Dwork
// and Roth (A.1), 4.84, is looser. delta must be > 0 (SET delta).
//
// Accounting. The per-query (epsilon, delta) only sets sigma. Each answer is
// charged its zero-concentrated DP cost rho = Delta2^2/(2 sigma^2) (Bun and
// Steinke 2016) to the analyst's dp budget, where rho is summed and the sum
// converted to epsilon at the delta cap (ir.ZCDPEpsilon): k answers cost about
// sqrt(k) times one, not k times. A GROUP BY over undeclared columns sets
// sigma from the counts' part of the share and adds the partition
// selection's (epsilon, delta) as a pure charge beside rho (partition.go).
type gaussian struct{ dpCount }

func newGaussian(p Params, env Env) (*gaussian, error) {
	base, err := newDPCountBase("gaussian", p, env, true)
	if err != nil {
		return nil, err
	}
	m := &gaussian{dpCount: base}
	m.draw = func(req *Request, count, l0, lInf int64) (int64, error) {
		return m.noise.AddGaussian(count, l0, lInf, req.Epsilon, req.Delta)
	}
	m.cost = func(_ *Request, p *dpPlan) (Charge, error) {
		sigma, err := GaussianSigma(p.l0, p.lInf, p.countEpsilon, p.countDelta)
		if err != nil {
			return Charge{}, &pgerror.Error{Code: pgerror.InvalidParameterValue, Message: "gaussian: " + err.Error(), Hint: "Choose another epsilon or delta with SET."}
		}
		return Charge{Kind: AccountingDP, Rho: GaussianRho(p.l0, p.lInf, sigma), Epsilon: p.selectEpsilon, Delta: p.selectDelta}, nil
	}
	return m, nil
}

func (m *gaussian) Describe() string {
	return "gaussian: (epsilon, delta)-differential privacy " + m.boundsClaim() +
		"; Gaussian noise of the analytic sigma for L2 sensitivity sqrt(G)*C rounded to integers, charged rho = Delta2^2/(2 sigma^2) per query to the analyst's dp budget (zCDP, the rho sum converted to epsilon at the delta cap); " +
		m.selection.describe() + ", the selection charged its epsilon and delta beside rho"
}

// ChargesRho: gaussian's answers are charged as zCDP rho.
func (*gaussian) ChargesRho() bool { return true }
