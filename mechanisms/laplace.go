package mechanisms

import (
	"countwall/pgerror"
)

func init() {
	Register("laplace", func(p Params, env Env) (Mechanism, error) { return newLaplace(p, env) })
}

// laplace is epsilon-differential privacy per person: secure Laplace noise
// of scale G*C/epsilon (the bounded L1 sensitivity over epsilon, see dpCount)
// rounded to integers, one draw per cell, the whole query charged epsilon
// once to the analyst's dp budget (Dwork, McSherry, Nissim and Smith 2006).
// A GROUP BY over undeclared columns is (epsilon, delta_share*delta)-DP:
// partition selection at epsilon_share*epsilon, the counts at the rest
// (partition.go), charged epsilon and the selection's delta.
type laplace struct{ dpCount }

func newLaplace(p Params, env Env) (*laplace, error) {
	base, err := newDPCountBase("laplace", p, env, false)
	if err != nil {
		return nil, err
	}
	m := &laplace{dpCount: base}
	m.draw = func(req *Request, count, l0, lInf int64) (int64, error) {
		return m.noise.AddLaplace(count, l0, lInf, req.Epsilon)
	}
	m.cost = func(req *Request, p *dpPlan) (Charge, error) {
		if err := checkLaplace(p.l0, p.lInf, p.countEpsilon); err != nil {
			return Charge{}, &pgerror.Error{Code: pgerror.InvalidParameterValue, Message: "laplace: " + err.Error(), Hint: "Choose a larger epsilon with SET epsilon."}
		}
		// The counts and the selection together use the query's epsilon.
		return Charge{Kind: AccountingDP, Epsilon: req.Epsilon, Delta: p.selectDelta}, nil
	}
	return m, nil
}

func (m *laplace) Describe() string {
	return "laplace: epsilon-differential privacy " + m.boundsClaim() +
		"; secure Laplace noise of scale G*C/epsilon rounded to integers, charged epsilon per query to the analyst's dp budget; " +
		m.selection.describe() + "; the selection's delta is charged beside epsilon"
}
