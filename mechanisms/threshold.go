package mechanisms

import (
	"countwall/ir"
	"countwall/pgerror"
)

// requestCells returns the cells a request asks about, refusing a malformed
// request instead of dereferencing nil.
func requestCells(req *Request) ([]ir.Cell, error) {
	if req == nil || req.Query == nil || req.Result == nil {
		return nil, pgerror.Errorf(pgerror.InternalError, "mechanism called without a query or its cells")
	}
	return req.Result.Cells, nil
}

// thresholdAnswers is the rule for a mechanism with no threshold rule of its
// own: a `COUNT(*) > b` query is answered by applying the mechanism to the
// count (answers holds those count answers) and publishing 1 when that
// answer exceeds b, else 0. For a query that is not a threshold query the
// answers are returned unchanged.
//
// A suppressed cell publishes 0 and stays marked Suppressed: the mechanism
// withheld the count, so comparing the stand-in 0 with b would pretend to
// know more than it does. A dropped cell stays dropped.
func thresholdAnswers(q *ir.Query, answers []Answer) []Answer {
	if q == nil || q.Threshold == nil {
		return answers
	}
	bound := q.Threshold.Bound
	out := make([]Answer, len(answers))
	for i, a := range answers {
		switch {
		case a.Dropped:
			out[i] = Answer{Dropped: true}
		case a.Suppressed:
			out[i] = Answer{Suppressed: true}
		case a.IsFloat && a.Float > float64(bound):
			out[i] = Answer{Int: 1}
		case !a.IsFloat && a.Int > bound:
			out[i] = Answer{Int: 1}
		default:
			out[i] = Answer{Int: 0}
		}
	}
	return out
}
