package mechanisms

import (
	"fmt"
	"math"
	"strings"

	"countwall/ir"
	"countwall/pgerror"
)

// SUM and AVG under laplace and gaussian, as Google's library computes them
// (dpagg.BoundedSum, dpagg.BoundedMean), from the planner's sums bounded
// per privacy unit (plan's sums_bounded.go): each value clamped to its
// column's public bounds [min, max], a unit counted with at most C values in
// a cell and in at most G cells. One unit then moves a cell's clamped sum
// by at most C*max(|min|, |max|), its count of values by at most C, and the
// normalized sum of BoundedMean (each value less the bounds' midpoint) by at
// most C*(max-min)/2, in at most G cells: the library's lInf and l0.
//
// The query's share (after the partition selection's part, partition.go)
// is split equally between the aggregates of the select list, as basic
// composition allows; an AVG splits its part in half between its noisy
// count of values and its noisy normalized sum, as BoundedMean does, and is
// mean = clamp(noisy normalized sum / max(noisy count, 1) + midpoint, min,
// max). A COUNT beside them is the integer count of COUNT queries at its
// part. Every SUM and AVG is a float8, never NULL: whether a cell holds a
// value is itself data.

// sumDraw is one noise draw of a cell: l0 = G cells, lInf per cell, at its
// part of the share.
type sumDraw struct {
	lInf           float64
	epsilon, delta float64
}

// sumPlan is how each aggregate of a query with sums is noised.
type sumPlan struct {
	parts int // the aggregates the share is split between
	// draws are per aggregate, in select-list order: one for COUNT and
	// SUM, two for AVG (its count of values, then its normalized sum).
	draws  [][]sumDraw
	bounds []ir.ValueBounds // per aggregate (zero for COUNT)
}

// AnswersSums: laplace and gaussian answer SUM and AVG.
func (m *dpCount) AnswersSums() bool { return true }

// FloatSums: noisy SUM and AVG are float8.
func (m *dpCount) FloatSums() bool { return true }

// planSums splits the counts' share of p between q's aggregates, refusing
// a summed column without public bounds, before the data is read.
func (m *dpCount) planSums(req *Request, p *dpPlan) (sumPlan, error) {
	q := req.Query
	sp := sumPlan{parts: len(q.Aggregates)}
	eps, delta := p.countEpsilon/float64(sp.parts), p.countDelta/float64(sp.parts)
	c := float64(p.lInf)
	for _, a := range q.Aggregates {
		if a.Func == ir.FuncCount {
			sp.draws = append(sp.draws, []sumDraw{{c, eps, delta}})
			sp.bounds = append(sp.bounds, ir.ValueBounds{})
			continue
		}
		b, err := columnBounds(req, a.Column, m.name)
		if err != nil {
			return sumPlan{}, err
		}
		sp.bounds = append(sp.bounds, b)
		if a.Func == ir.FuncSum {
			sp.draws = append(sp.draws, []sumDraw{{c * max(math.Abs(b.Min), math.Abs(b.Max)), eps, delta}})
			continue
		}
		sp.draws = append(sp.draws, []sumDraw{{c, eps / 2, delta / 2}, {c * (b.Max - b.Min) / 2, eps / 2, delta / 2}})
	}
	return sp, nil
}

// columnBounds are a summed column's public bounds, or the refusal that
// says to declare them.
func columnBounds(req *Request, column, mechanism string) (ir.ValueBounds, error) {
	if req.Table != nil {
		if col := req.Table.Columns[strings.ToLower(column)]; col != nil && col.Bounds != nil {
			return *col.Bounds, nil
		}
	}
	table := req.Query.Table
	if req.Table != nil {
		table = req.Table.Name
	}
	return ir.ValueBounds{}, pgerror.Errorf(pgerror.FeatureNotSupported, "%s answers SUM and AVG over %q only within its public bounds, and none are declared", mechanism, column).
		WithHint(fmt.Sprintf("Declare them in the config: tables.%s.bounds.%s: {min: ..., max: ...}; values outside are clamped to them.", table, column))
}

// sumCharge checks every draw's parameters and returns the query's charge:
// laplace's is the whole share (each draw's epsilon adds up to it), and
// gaussian's the sum of its draws' rho beside the selection's.
func (m *dpCount) sumCharge(req *Request, p *dpPlan, sp *sumPlan) (Charge, error) {
	rho := 0.0
	for _, draws := range sp.draws {
		for _, d := range draws {
			if d.lInf == 0 {
				continue // bounds of one value: nothing to noise
			}
			if !m.withDelta {
				if err := checkLaplaceFloat(0, float64(p.l0)*d.lInf, d.epsilon); err != nil {
					return Charge{}, &pgerror.Error{Code: pgerror.InvalidParameterValue, Message: m.name + ": " + err.Error(), Hint: "Choose a larger epsilon with SET epsilon, or narrower bounds."}
				}
				continue
			}
			sigma, err := GaussianSigmaFloat(p.l0, d.lInf, d.epsilon, d.delta)
			if err != nil {
				return Charge{}, &pgerror.Error{Code: pgerror.InvalidParameterValue, Message: m.name + ": " + err.Error(), Hint: "Choose another epsilon or delta with SET, or narrower bounds."}
			}
			rho += float64(p.l0) * d.lInf * d.lInf / (2 * sigma * sigma)
		}
	}
	if m.withDelta {
		return Charge{Kind: AccountingDP, Rho: rho, Epsilon: p.selectEpsilon, Delta: p.selectDelta}, nil
	}
	return Charge{Kind: AccountingDP, Epsilon: req.Epsilon, Delta: p.selectDelta}, nil
}

// addFloat adds one draw's noise to x.
func (m *dpCount) addFloat(x float64, l0 int64, d sumDraw) (float64, error) {
	if d.lInf == 0 {
		return x, nil
	}
	if m.withDelta {
		return m.noise.AddGaussianFloat(x, l0, d.lInf, d.epsilon, d.delta)
	}
	return m.noise.AddLaplaceFloat(x, float64(l0)*d.lInf, d.epsilon)
}

// sumAnswer noises one kept cell's aggregates.
func (m *dpCount) sumAnswer(req *Request, p *dpPlan, sp *sumPlan, c ir.Cell) (Answer, error) {
	q := req.Query
	cols := q.SumColumns()
	values := make([]float64, len(q.Aggregates))
	var avgParts map[int][2]float64
	var out Answer
	for i, a := range q.Aggregates {
		draws := sp.draws[i]
		if a.Func == ir.FuncCount {
			r := *req
			r.Epsilon, r.Delta = draws[0].epsilon, draws[0].delta
			n, err := m.draw(&r, c.Count, p.l0, p.lInf)
			if err != nil {
				return Answer{}, err
			}
			out.Int = max(n, 0)
			values[i] = float64(out.Int)
			continue
		}
		var s ir.SumValue // a cell no unit reached holds no figures: zero
		if k := indexOfColumn(cols, a.Column); k >= 0 && k < len(c.Sums) {
			s = c.Sums[k]
		}
		b := sp.bounds[i]
		if a.Func == ir.FuncSum {
			v, err := m.addFloat(s.Clamped, p.l0, draws[0])
			if err != nil {
				return Answer{}, err
			}
			values[i] = v
			continue
		}
		r := *req
		r.Epsilon, r.Delta = draws[0].epsilon, draws[0].delta
		n, err := m.draw(&r, s.N, p.l0, p.lInf)
		if err != nil {
			return Answer{}, err
		}
		mid := b.Min + (b.Max-b.Min)/2
		norm, err := m.addFloat(s.Clamped-float64(s.N)*mid, p.l0, draws[1])
		if err != nil {
			return Answer{}, err
		}
		values[i] = b.Clamp(norm/math.Max(1, float64(n)) + mid)
		if avgParts == nil {
			avgParts = map[int][2]float64{}
		}
		avgParts[i] = [2]float64{float64(n), norm}
	}
	out.Sums = &Sums{Aggregates: values, avgParts: avgParts}
	return out, nil
}

func indexOfColumn(cols []string, c string) int {
	for i, x := range cols {
		if x == c {
			return i
		}
	}
	return -1
}
