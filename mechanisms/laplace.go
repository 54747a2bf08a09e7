package mechanisms

import "context"

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

func (m *laplace) Answer(ctx context.Context, req *Request) ([]Answer, Charge, error) {
	answers, err := m.answer(ctx, req, false)
	if err != nil {
		return nil, Charge{}, err
	}
	return answers, Charge{Kind: AccountingDP, Epsilon: req.Epsilon}, nil
}
