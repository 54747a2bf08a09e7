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
// in select-list order, from the noisy figures and the plan: the library's
// interval for a COUNT (from 0) and a SUM; for an AVG, from its two noisy
// figures (avgInterval).
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
		if i >= len(a.Sums.Aggregates) {
			continue
		}
		if agg.Func == ir.FuncAvg {
			if parts, ok := a.Sums.avgParts[i]; ok {
				out[i] = m.avgInterval(p.l0, p.sums.draws[i], p.sums.bounds[i], parts, confidence)
			}
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

// avgInterval is an AVG's interval: the library's intervals of its noisy
// count of values and its noisy normalized sum, each at half the miss
// rate (so that both hold together at the confidence asked, by the union
// bound), give a box that holds the true count N and normalized sum S; the
// true AVG, S/N plus the bounds' midpoint, lies between the box's corners,
// and always within the bounds. A box that allows no value (N below 1)
// leaves the whole range of the bounds.
func (m *dpCount) avgInterval(l0 int64, draws []sumDraw, b ir.ValueBounds, parts [2]float64, confidence float64) SumInterval {
	each := 1 - (1-confidence)/2
	nLo, nHi, ok1 := m.drawInterval(l0, draws[0], parts[0], each)
	sLo, sHi, ok2 := m.drawInterval(l0, draws[1], parts[1], each)
	if !ok1 || !ok2 {
		return SumInterval{}
	}
	nLo = max(nLo, 1)
	if nHi < nLo {
		return SumInterval{Lo: b.Min, Hi: b.Max, OK: true}
	}
	mid := b.Min + (b.Max-b.Min)/2
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range []float64{sLo, sHi} {
		for _, n := range []float64{nLo, nHi} {
			lo, hi = min(lo, s/n), max(hi, s/n)
		}
	}
	return SumInterval{Lo: b.Clamp(lo + mid), Hi: b.Clamp(hi + mid), OK: true}
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
