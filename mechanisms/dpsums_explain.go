package mechanisms

import (
	"fmt"
	"math"

	"countwall/ir"
)

// EXPLAIN and intervals of laplace's and gaussian's SUM and AVG, from the
// plan alone (dpsums.go).

// sumExplain states how each aggregate of a query with sums is noised: its
// part of the share, sensitivity, noise and 95% error.
func (m *dpCount) sumExplain(req *Request, p *dpPlan) []ExplainLine {
	sp := p.sums
	lines := []ExplainLine{{"Budget split", fmt.Sprintf("epsilon %g%s for the aggregates, split equally between %d aggregate(s); an AVG halves its part between its count of values and its normalized sum (as dpagg.BoundedMean)",
		p.countEpsilon, m.deltaText(" and delta %g", p.countDelta), sp.parts)}}
	for i, a := range req.Query.Aggregates {
		label := a.Func.String()
		if a.Func != ir.FuncCount {
			label += "(" + a.Column + ")"
		}
		lines = append(lines, ExplainLine{label, m.aggregateText(p, a, sp.bounds[i], sp.draws[i])})
	}
	return lines
}

// aggregateText is one aggregate's EXPLAIN line.
func (m *dpCount) aggregateText(p *dpPlan, a ir.Aggregate, b ir.ValueBounds, draws []sumDraw) string {
	d := draws[0]
	share := fmt.Sprintf("epsilon %.4g%s", d.epsilon, m.deltaText(", delta %.3g", d.delta))
	switch a.Func {
	case ir.FuncCount:
		return fmt.Sprintf("%s; %s; 95%% within %s of the truth", share, m.noiseText(p.l0, d), m.errorText(p.l0, d))
	case ir.FuncSum:
		return fmt.Sprintf("values clamped to [%g, %g]; %s; sensitivity C*max(|min|, |max|) = %.4g per cell, G = %d; %s; 95%% within %s of the clamped sum",
			b.Min, b.Max, share, d.lInf, p.l0, m.noiseText(p.l0, d), m.errorText(p.l0, d))
	}
	s := draws[1]
	return fmt.Sprintf("values clamped to [%g, %g]; the noisy normalized sum (values less the midpoint %g, sensitivity C*(max-min)/2 = %.4g) over the noisy count of values (sensitivity C = %g), each at %s; %s for the sum and %s for the count; the mean clamped to [%g, %g]",
		b.Min, b.Max, b.Min+(b.Max-b.Min)/2, s.lInf, d.lInf, share, m.noiseText(p.l0, s), m.noiseText(p.l0, d), b.Min, b.Max)
}

func (m *dpCount) deltaText(format string, delta float64) string {
	if !m.withDelta {
		return ""
	}
	return fmt.Sprintf(format, delta)
}

// noiseText names one draw's noise.
func (m *dpCount) noiseText(l0 int64, d sumDraw) string {
	if d.lInf == 0 {
		return "no noise (the bounds hold one value)"
	}
	if m.withDelta {
		sigma, _ := GaussianSigmaFloat(l0, d.lInf, d.epsilon, d.delta)
		return fmt.Sprintf("Gaussian noise of sigma %.4g", sigma)
	}
	return fmt.Sprintf("Laplace noise of scale %.4g", float64(l0)*d.lInf/d.epsilon)
}

// errorText is the half-width of one draw's 95% interval.
func (m *dpCount) errorText(l0 int64, d sumDraw) string {
	lo, hi, ok := m.drawInterval(l0, d, 0, ExplainConfidence)
	if !ok {
		return "0"
	}
	return fmt.Sprintf("±%.4g", (hi-lo)/2)
}

// drawInterval is the library's confidence interval around x for one draw.
func (m *dpCount) drawInterval(l0 int64, d sumDraw, x, confidence float64) (lo, hi float64, ok bool) {
	if d.lInf == 0 {
		return x, x, true
	}
	delta := 0.0
	if m.withDelta {
		delta = d.delta
	}
	ci, err := m.library().ComputeConfidenceIntervalFloat64(x, l0, d.lInf, d.epsilon, delta, 1-confidence)
	if err != nil || math.IsNaN(ci.LowerBound) || math.IsNaN(ci.UpperBound) {
		return 0, 0, false
	}
	return ci.LowerBound, ci.UpperBound, true
}

// SumIntervals are the intervals of each aggregate of an answer with sums,
// in select-list order, from the published values and the plan: the
// library's interval for a COUNT (from 0) and a SUM; none for an AVG, a
// ratio of two noisy figures neither of which is published.
func (m *dpCount) SumIntervals(req *Request, a Answer, confidence float64) []SumInterval {
	bounds := req.Bounds
	if req.Result != nil {
		bounds = req.Result.Bounds
	}
	p, err := m.plan(req, bounds)
	if err != nil || p.sums == nil || a.Sums == nil || a.Dropped {
		return nil
	}
	out := make([]SumInterval, len(req.Query.Aggregates))
	for i, agg := range req.Query.Aggregates {
		if agg.Func == ir.FuncAvg || i >= len(a.Sums.Aggregates) {
			continue
		}
		lo, hi, ok := m.drawInterval(p.l0, p.sums.draws[i][0], a.Sums.Aggregates[i], confidence)
		if agg.Func == ir.FuncCount {
			lo = max(lo, 0)
		}
		out[i] = SumInterval{Lo: lo, Hi: hi, OK: ok}
	}
	return out
}

// SumInterval is one aggregate's interval; OK is false where none is stated.
type SumInterval struct {
	Lo, Hi float64
	OK     bool
}

// SumIntervals are m's intervals for each aggregate of answer a, or nil.
func SumIntervals(m Mechanism, req *Request, a Answer, confidence float64) []SumInterval {
	if s, ok := m.(interface {
		SumIntervals(*Request, Answer, float64) []SumInterval
	}); ok {
		return s.SumIntervals(req, a, confidence)
	}
	return nil
}
