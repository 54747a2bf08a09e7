package mechanisms

import (
	"countwall/ir"
	"countwall/pgerror"
)

// localSensitivity is a data-dependent sensitivity rule, the one thing in
// which idp and bdp differ: c is a cell's count, n the table size.
type localSensitivity struct {
	// histogram is the sensitivity of every cell of a GROUP BY.
	histogram func(cells []ir.Cell, n int64) float64
	// threshold is the sensitivity of the 0/1 answer of `COUNT(*) > b`.
	threshold func(c, n, b int64) float64
	// count is the sensitivity of a plain COUNT.
	count func(c, n int64) float64
	// max bounds all three whatever the data: the noise scale is checked
	// against it before the data is read, so that no refusal depends on a
	// count.
	max float64
}

// priceLocal is the check idp and bdp make before the data is read: a
// well-formed query, GROUP BY only over declared domains, an epsilon the
// noise can use at the largest sensitivity the rule can give. The charge is
// epsilon of the given kind.
func priceLocal(req *Request, name string, kind Accounting, rule localSensitivity) (Charge, error) {
	if req == nil || req.Query == nil {
		return Charge{}, pgerror.Errorf(pgerror.InternalError, "mechanism called without a query")
	}
	if err := requireDeclaredDomain(req, name); err != nil {
		return Charge{}, err
	}
	if err := checkShare(req, false); err != nil {
		return Charge{}, err
	}
	if err := checkLaplaceFloat(0, rule.max, req.Epsilon); err != nil {
		return Charge{}, &pgerror.Error{Code: pgerror.InvalidParameterValue, Message: name + ": " + err.Error(), Hint: "Choose a larger epsilon with SET epsilon."}
	}
	return Charge{Kind: kind, Epsilon: req.Epsilon}, nil
}

// checkLocalShare refuses an epsilon the noise of idp or bdp cannot use.
func checkLocalShare(epsilon float64, rule localSensitivity) error {
	if err := checkShare(&Request{Epsilon: epsilon}, false); err != nil {
		return err
	}
	if err := checkLaplaceFloat(0, rule.max, epsilon); err != nil {
		return &pgerror.Error{Code: pgerror.InvalidParameterValue, Message: err.Error(), Hint: "Choose a larger epsilon with SET epsilon."}
	}
	return nil
}

// answerLocal is the answer loop of the mechanisms whose Laplace noise has a
// data-dependent scale (idp, bdp): each cell gets its value plus Laplace
// noise of scale sensitivity/epsilon, or the exact value when the
// sensitivity is 0. A threshold query without GROUP BY noises its exact 0 or
// 1; a threshold GROUP BY thresholds the noisy counts. Every answer is a
// float, exact answers included, so the column type does not depend on the
// data. The charge is epsilon of the given kind.
func answerLocal(req *Request, name string, kind Accounting, noise NoiseSource, rule localSensitivity) ([]Answer, Charge, error) {
	cells, err := accountedCells(req, name, false)
	if err != nil {
		return nil, Charge{}, err
	}
	n := req.Result.TableSize
	q := req.Query
	grouped := len(q.GroupBy) > 0
	histSens := 0.0
	if grouped {
		histSens = rule.histogram(cells, n)
	}
	answers := make([]Answer, len(cells))
	for i, c := range cells {
		if !c.InDomain {
			answers[i] = Answer{Dropped: true}
			continue
		}
		value := float64(c.Count)
		var sens float64
		switch {
		case grouped:
			sens = histSens
		case q.Threshold != nil:
			sens = rule.threshold(c.Count, n, q.Threshold.Bound)
			value = 0
			if c.Count > q.Threshold.Bound {
				value = 1
			}
		default:
			sens = rule.count(c.Count, n)
		}
		out, err := addScaledLaplace(noise, value, sens, req.Epsilon)
		if err != nil {
			return nil, Charge{}, pgerror.Errorf(pgerror.InvalidParameterValue, "%s: %v", name, err)
		}
		answers[i] = Answer{Float: out, IsFloat: true}
	}
	if grouped && q.Threshold != nil {
		answers = floatAnswers(thresholdAnswers(q, answers))
	}
	return answers, Charge{Kind: kind, Epsilon: req.Epsilon}, nil
}

// addScaledLaplace returns value exactly when sensitivity is 0, else value
// plus Laplace noise of scale sensitivity/epsilon.
func addScaledLaplace(src NoiseSource, value, sensitivity, epsilon float64) (float64, error) {
	if sensitivity == 0 {
		return value, nil
	}
	return src.AddLaplaceFloat(value, sensitivity, epsilon)
}

// floatAnswers turns integer answers (a thresholded 0 or 1) into floats, so
// that a float mechanism's column type never varies.
func floatAnswers(answers []Answer) []Answer {
	for i, a := range answers {
		if !a.IsFloat && !a.Dropped {
			answers[i] = Answer{Float: float64(a.Int), IsFloat: true, Suppressed: a.Suppressed}
		}
	}
	return answers
}
