package mechanisms

import (
	"context"
	"fmt"

	"countwall/pgerror"
	"countwall/planner"
)

func init() {
	Register("laplace", func(p Params, env Env) (Mechanism, error) { return newDPCount(p, env, false) })
	Register("gaussian", func(p Params, env Env) (Mechanism, error) { return newDPCount(p, env, true) })
}

// dpCount is the laplace mechanism (epsilon-DP, Laplace noise of
// scale 1/epsilon) and the gaussian mechanism ((epsilon, delta)-DP,
// Gaussian noise of the library's analytic sigma); see gaussian.go for the
// latter's claim.
//
// Sensitivity. Every cell is noised with l0 = 1 and lInf = 1: adding or
// removing one record changes one cell of a histogram by one (the cells of
// a GROUP BY are disjoint), so the query's L1 (and L2) sensitivity is 1 and
// the whole query costs epsilon once. For COUNT(DISTINCT unit) a record is a
// privacy unit and the guarantee is per unit. For COUNT(*) a record is a row:
// the guarantee is per unit only where each unit has one row (as in the
// generated people table); a unit with r rows is protected at r*epsilon.
//
// Domains. A GROUP BY is answered only when every group column has a
// declared public domain (Result.DomainComplete): otherwise which groups
// appear would itself disclose data, outside the guarantee.
//
// Answers are integers clamped at 0 (post-processing: clamping costs no
// privacy but biases small counts upwards). A threshold query `COUNT(*) > b`
// publishes 1 when the clamped noisy count exceeds b.
type dpCount struct {
	gaussian bool
	noise    NoiseSource
}

func newDPCount(p Params, env Env, gaussian bool) (Mechanism, error) {
	if err := checkKnownParams(p); err != nil {
		return nil, err
	}
	return &dpCount{gaussian: gaussian, noise: noiseFor(env)}, nil
}

func (m *dpCount) Name() string {
	if m.gaussian {
		return "gaussian"
	}
	return "laplace"
}

// Needs is empty: the count is all the noise is added to.
func (*dpCount) Needs() planner.Needs { return planner.Needs{} }

func (m *dpCount) Describe() string {
	if m.gaussian {
		return "gaussian: (epsilon, delta)-differential privacy per query (Gaussian noise, sensitivity 1 per record), " +
			"charged to the analyst's dp budget; GROUP BY only over declared domains"
	}
	return "laplace: epsilon-differential privacy per query (secure Laplace noise of scale 1/epsilon rounded to integers, sensitivity 1 per record), " +
		"charged to the analyst's dp budget; GROUP BY only over declared domains"
}

// Accounting is the kind of budget the mechanism charges.
func (*dpCount) Accounting() Accounting { return AccountingDP }

func (m *dpCount) Answer(_ context.Context, req *Request) ([]Answer, Charge, error) {
	cells, err := accountedCells(req, m.Name(), m.gaussian)
	if err != nil {
		return nil, Charge{}, err
	}
	answers := make([]Answer, len(cells))
	for i, c := range cells {
		if !c.InDomain {
			answers[i] = Answer{Dropped: true}
			continue
		}
		var noisy int64
		if m.gaussian {
			noisy, err = m.noise.AddGaussian(c.Count, 1, 1, req.Epsilon, req.Delta)
		} else {
			noisy, err = m.noise.AddLaplace(c.Count, 1, 1, req.Epsilon)
		}
		if err != nil {
			return nil, Charge{}, pgerror.Errorf(pgerror.InvalidParameterValue, "%s: %v", m.Name(), err)
		}
		answers[i] = Answer{Int: max(noisy, 0)}
	}
	charge := Charge{Kind: AccountingDP, Epsilon: req.Epsilon}
	if m.gaussian {
		charge.Delta = req.Delta
	}
	return thresholdAnswers(req.Query, answers), charge, nil
}

// requireDomain refuses a GROUP BY whose groups are not all declared public:
// a mechanism that noises counts but not the set of groups would reveal
// which groups exist.
func requireDomain(req *Request, mechanism string) error {
	if len(req.Query.GroupBy) == 0 || req.Result.DomainComplete {
		return nil
	}
	return &pgerror.Error{
		Code:    pgerror.FeatureNotSupported,
		Message: fmt.Sprintf("the %s mechanism answers GROUP BY only over columns with a declared public domain", mechanism),
		Hint:    "Declare the domain (a list of categories or an integer range) of each GROUP BY column in the table's config.",
	}
}

// checkShare refuses a per-query budget share the noise cannot honour, as
// an error the analyst can act on with SET.
func checkShare(req *Request, needDelta bool) error {
	if err := checkEpsilon(req.Epsilon); err != nil {
		return &pgerror.Error{Code: pgerror.InvalidParameterValue, Message: err.Error(), Hint: "Choose another value with SET epsilon."}
	}
	if !needDelta {
		return nil
	}
	if err := checkDelta(req.Delta); err != nil {
		return &pgerror.Error{Code: pgerror.InvalidParameterValue, Message: err.Error(), Hint: "Choose a delta > 0 with SET delta."}
	}
	return nil
}

// accountedCells is the common check of the mechanisms that charge a budget:
// a well-formed request, a GROUP BY only over declared domains, and a budget
// share the noise can use (with delta when withDelta).
func accountedCells(req *Request, name string, withDelta bool) ([]planner.Cell, error) {
	cells, err := requestCells(req)
	if err != nil {
		return nil, err
	}
	if err := requireDomain(req, name); err != nil {
		return nil, err
	}
	if err := checkShare(req, withDelta); err != nil {
		return nil, err
	}
	return cells, nil
}
