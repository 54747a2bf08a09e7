package mechanisms

import (
	"context"

	"countwall/pgerror"
)

func init() {
	Register("laplace", func(p Params, env Env) (Mechanism, error) { return newLaplace(p, env) })
}

// laplace is epsilon-differential privacy per person: secure Laplace noise
// of scale G*C/epsilon (the bounded L1 sensitivity over epsilon, see dpCount)
// rounded to integers, one draw per cell, the whole query charged epsilon
// once to the analyst's dp budget (Dwork, McSherry, Nissim and Smith 2006).
type laplace struct{ dpCount }

func newLaplace(p Params, env Env) (*laplace, error) {
	base, err := newDPCountBase("laplace", p, env)
	if err != nil {
		return nil, err
	}
	m := &laplace{dpCount: base}
	m.draw = func(req *Request, count, l0, lInf int64) (int64, error) {
		return m.noise.AddLaplace(count, l0, lInf, req.Epsilon)
	}
	return m, nil
}

func (m *laplace) Describe() string {
	return "laplace: epsilon-differential privacy " + m.boundsClaim() +
		"; secure Laplace noise of scale G*C/epsilon rounded to integers, charged epsilon per query to the analyst's dp budget; GROUP BY only over declared domains"
}

// Price refuses what laplace cannot answer and charges epsilon, before the
// data is read.
func (m *laplace) Price(req *Request) (Charge, error) {
	l0, lInf, err := m.price(req, false)
	if err != nil {
		return Charge{}, err
	}
	if err := checkLaplace(l0, lInf, req.Epsilon); err != nil {
		return Charge{}, &pgerror.Error{Code: pgerror.InvalidParameterValue, Message: "laplace: " + err.Error(), Hint: "Choose a larger epsilon with SET epsilon."}
	}
	return Charge{Kind: AccountingDP, Epsilon: req.Epsilon}, nil
}

// CheckShare refuses an epsilon the noise cannot use.
func (m *laplace) CheckShare(epsilon, delta float64) error {
	return m.checkShare(epsilon, delta, false)
}

func (m *laplace) Answer(ctx context.Context, req *Request) ([]Answer, Charge, error) {
	answers, err := m.answer(ctx, req, false)
	if err != nil {
		return nil, Charge{}, err
	}
	return answers, Charge{Kind: AccountingDP, Epsilon: req.Epsilon}, nil
}
