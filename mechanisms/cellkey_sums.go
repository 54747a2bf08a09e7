package mechanisms

import (
	"fmt"
	"math"
	"slices"

	"countwall/ir"
)

// The cell key method for magnitude tables, as the ABS applies it
// (Thompson, Broadfoot and Elazar 2013) and the cellKey R package
// implements it (top_contr with simple parameters; Giessing and Tent 2019):
// a cell's sum x is published as
//
//	x + sum over i = 1..k of eps_i * (m/100) * |x_i| * v_i
//
// where x_1..x_k are the cell's k largest contributions (per privacy unit,
// in absolute value, values clamped to the bounds), eps_i = 2^-(i-1)
// weights them, m is the magnitude percentage and v_i is read from the
// magnitude perturbation table at a position derived from the cell key (the
// cell key itself for the largest, a fixed bijective mix of it for the
// others). The table holds values on [-D, D] with mean 0 and variance V
// (the maximum-entropy shape, exp(-lambda v^2), as the ptable package
// builds it); mu moves every value away from 0 by mu, so that even the
// smallest perturbation of the largest contribution is mu * m% of it.
//
// The noise is sticky: the same contributors give the same cell key and
// the same contributions, hence the same answer, whatever SQL selected
// them. The values counted (AVG's divisor) are perturbed like a count,
// from the count table with the same key, so AVG is the perturbed sum over
// the perturbed count.

// Magnitude defaults: the three largest contributions, 10% of each at unit
// perturbation, perturbations within +-2 with variance 1.
const (
	cellKeyDefaultTopK    = 3
	cellKeyDefaultPercent = 10.0
	cellKeyDefaultMagD    = 2.0
	cellKeyDefaultMagV    = 1.0
	// magnitudeTableSteps is the number of steps on each side of 0.
	magnitudeTableSteps = 100
)

// magnitudeTable is the continuous perturbation table: values on a grid
// over [-D, D] and their cumulative probabilities.
type magnitudeTable struct {
	d, v, mu float64
	values   []float64
	cum      []float64 // cum[i] is P(value <= values[i]); the last is 1
}

// newMagnitudeTable builds the table of variance v on [-d, d]: p(x) is
// proportional to exp(-lambda x^2), lambda found by bisection. v must be
// below d^2/3, the variance of the uniform table (lambda 0).
func newMagnitudeTable(d, v, mu float64) (*magnitudeTable, error) {
	if !(d > 0) || !(v > 0) || v >= d*d/3 {
		return nil, fmt.Errorf("the variance must be above 0 and below D^2/3 = %g", d*d/3)
	}
	t := &magnitudeTable{d: d, v: v, mu: mu}
	for i := -magnitudeTableSteps; i <= magnitudeTableSteps; i++ {
		t.values = append(t.values, d*float64(i)/magnitudeTableSteps)
	}
	probs := func(lambda float64) ([]float64, float64) {
		p := make([]float64, len(t.values))
		total, second := 0.0, 0.0
		for i, x := range t.values {
			p[i] = math.Exp(-lambda * x * x)
			total += p[i]
		}
		for i, x := range t.values {
			p[i] /= total
			second += p[i] * x * x
		}
		return p, second
	}
	lo, hi := 0.0, 1.0
	for _, second := probs(hi); second > v; _, second = probs(hi) {
		lo, hi = hi, hi*2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if _, second := probs(mid); second > v {
			lo = mid
		} else {
			hi = mid
		}
	}
	p, _ := probs((lo + hi) / 2)
	acc := 0.0
	for _, x := range p {
		acc += x
		t.cum = append(t.cum, acc)
	}
	t.cum[len(t.cum)-1] = 1
	return t, nil
}

// value is the perturbation at position pos in [0, 1), moved away from 0 by
// mu (a 0 goes up or down by the half of [0, 1) pos lies in).
func (t *magnitudeTable) value(pos float64) float64 {
	i, _ := slices.BinarySearch(t.cum, pos)
	for i < len(t.cum)-1 && t.cum[i] <= pos {
		i++
	}
	x := t.values[min(i, len(t.values)-1)]
	switch {
	case x > 0 || (x == 0 && pos >= 0.5):
		return x + t.mu
	default:
		return x - t.mu
	}
}

// magnitudeKey is the key of the i-th largest contribution: the cell key
// for i = 0, a bijective mix of it (murmur3's finaliser) for the others, so
// that each contribution's perturbation is as sticky as the cell key.
func magnitudeKey(key uint32, i int) uint32 {
	if i == 0 {
		return key
	}
	h := key + uint32(i)*0x9e3779b9
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// magnitudeNoise is the perturbation of a cell's sum s under key.
func (m *cellKey) magnitudeNoise(s ir.SumValue, key uint32) float64 {
	noise, weight := 0.0, 1.0
	for i, x := range signedTop(s, m.topK) {
		noise += weight * m.percent / 100 * math.Abs(x) * m.magnitude.value(cellKeyPosition(magnitudeKey(key, i)))
		weight /= 2
	}
	return noise
}

// answerSums answers a query with sums: counts as for COUNT, each sum
// perturbed by its largest contributions and each count of values by the
// count table, all with the cell key.
func (m *cellKey) answerSums(req *Request, cells []ir.Cell, counts []Answer) []Answer {
	cols := req.Query.SumColumns()
	for i, c := range cells {
		if counts[i].Suppressed || counts[i].Dropped || c.Count <= 0 {
			continue
		}
		out := make([]ir.SumValue, len(c.Sums))
		for k, s := range c.Sums {
			if s.N <= 0 {
				continue // no value: NULL, as PostgreSQL's
			}
			n := counts[i].Int
			if s.N != c.Count {
				n = addNoiseClampedAtZero(s.N, m.table.noise(s.N, cellKeyPosition(c.Key)))
			}
			n = max(n, 1)
			sum := s.Clamped + m.magnitudeNoise(s, c.Key)
			if b := sumBounds(req, cols[k]); b != nil {
				sum = min(max(sum, float64(n)*b.Min), float64(n)*b.Max)
			}
			out[k] = publishedSum(s, n, sum)
		}
		counts[i].Sums = &Sums{Columns: out}
	}
	return counts
}

// sumBounds are a summed column's bounds, nil when the request does not
// carry its table.
func sumBounds(req *Request, col string) *ir.ValueBounds {
	if req.Table == nil || req.Table.Columns[col] == nil {
		return nil
	}
	return req.Table.Columns[col].Bounds
}

// magnitudeText states the magnitude perturbation, for EXPLAIN.
func (m *cellKey) magnitudeText() string {
	return fmt.Sprintf("each sum moved by its %d largest contributions per person (weights 1, 1/2, ...), each by %g%% of it times a value "+
		"from the magnitude table on [-%g, %g] (variance %g, pushed %g away from 0) read at the cell key: sticky; "+
		"values clamped to the column's bounds; AVG is the perturbed sum over the perturbed count",
		m.topK, m.percent, m.magnitude.d, m.magnitude.d, m.magnitude.v, m.magnitude.mu)
}
