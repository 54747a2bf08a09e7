package proxy

import (
	"countwall/ir"
	"countwall/mechanisms"
)

// With countwall.confidence set, an answer with noisy sums carries each
// aggregate's interval after its columns, as <alias>_ci_low and
// <alias>_ci_high in select-list order: the library's interval around a
// COUNT and a SUM, from the published value and the noise's parameters
// only; NULL for an AVG, a ratio of two noisy figures neither of which is
// published. exact's sums carry none (its answers are the truth).

// sumIntervalColumns are the interval columns of q's aggregates, when the
// session asks for intervals and the mechanism noises sums.
func (s *Session) sumIntervalColumns(rt *runtime, q *ir.Query) []Column {
	if _, ok := s.confidence(); !ok || !mechanisms.FloatSums(rt.mech) {
		return nil
	}
	cols := make([]Column, 0, 2*len(q.Aggregates))
	for _, a := range q.Aggregates {
		cols = append(cols, Column{Name: a.Alias + "_ci_low", Type: ColumnFloat8}, Column{Name: a.Alias + "_ci_high", Type: ColumnFloat8})
	}
	return cols
}

// addSumIntervals adds each released row's intervals to an answer with
// sums (rows are the answers not dropped, in order).
func (s *Session) addSumIntervals(rt *runtime, req *mechanisms.Request, answers []mechanisms.Answer, res *Result) {
	cols := s.sumIntervalColumns(rt, req.Query)
	c, ok := s.confidence()
	if len(cols) == 0 || !ok {
		return
	}
	res.Columns = append(res.Columns, cols...)
	res.sumIntervals = len(cols)
	row := 0
	for _, a := range answers {
		if a.Dropped {
			continue
		}
		iv := mechanisms.SumIntervals(rt.mech, req, a, c)
		for i := range req.Query.Aggregates {
			if i < len(iv) && iv[i].OK {
				res.Rows[row] = append(res.Rows[row], Value{Float: iv[i].Lo}, Value{Float: iv[i].Hi})
			} else {
				res.Rows[row] = append(res.Rows[row], Value{Null: true}, Value{Null: true})
			}
		}
		row++
	}
}
