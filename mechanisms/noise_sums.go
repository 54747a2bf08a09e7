package mechanisms

import (
	"fmt"
	"math"

	"countwall/ir"
)

// The count rules of bounded and layered applied to SUM and AVG, each value
// clamped to its column's bounds. Neither claims a formal guarantee.
//
// bounded: each sum gets fresh uniform noise on [-r*B, r*B], B the larger
// of |min| and |max| (one value's largest effect, as r is one row's for a
// count), and the values counted (AVG's divisor) fresh integer noise on
// [-r, r] like a count. Asking again averages it away, as for counts.
//
// layered: Diffix's sum (pg_diffix, Diffix Aspen). Within a cell the 1 or 2
// largest contributions per person (the outliers, how many chosen by the
// contributor key) are flattened to the average of the next 3 or 4 (the
// top group), and the sum gets the count's sticky layers (one per
// condition, group value and set of contributors) with SD noise_layer_sd
// times that top-group average: the noise scales with what the largest
// contributors put in, and a single extreme value cannot stand out. The
// layers are seeded apart from the count's, so the count's noise says
// nothing of the sum's.

// floatIn returns a uniform real number in [lo, hi].
func (s *uniformIntSource) floatIn(lo, hi float64) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return lo + (hi-lo)*s.rng.Float64()
}

// largestEffect is the most one value moves a sum of the column: the
// larger of |min| and |max|.
func largestEffect(req *Request, col string) float64 {
	b := sumBounds(req, col)
	if b == nil {
		return 0
	}
	return max(math.Abs(b.Min), math.Abs(b.Max))
}

// keepInBounds keeps a noisy sum of n values within what n values could
// sum to.
func keepInBounds(req *Request, col string, n int64, sum float64) float64 {
	if b := sumBounds(req, col); b != nil {
		return min(max(sum, float64(n)*b.Min), float64(n)*b.Max)
	}
	return sum
}

func (*bounded) AnswersSums() bool                  { return true }
func (*bounded) ClampsSums() bool                   { return true }
func (*bounded) Price(req *Request) (Charge, error) { return Charge{}, checkSumBounds(req) }

// answerSums adds fresh noise to each published cell's sums.
func (m *bounded) answerSums(req *Request, cells []ir.Cell, counts []Answer) []Answer {
	return publishNoisySums(req, cells, counts,
		func(_ ir.Cell, _ string, s ir.SumValue) int64 {
			return addNoiseClampedAtZero(s.N, m.rng.intIn(-m.r, m.r))
		},
		func(_ ir.Cell, col string, s ir.SumValue) float64 {
			spread := float64(m.r) * largestEffect(req, col)
			return s.Clamped + m.rng.floatIn(-spread, spread)
		})
}

// publishNoisySums publishes each published cell's sums as a noisy
// mechanism does: the count of a column's values is the cell's published
// count, or valuesCount's where NULLs make it differ, at least 1; the sum
// is noisySum's, kept within what that many values in bounds can reach. A
// cell withheld or dropped, and a column with no value, publish no sum.
func publishNoisySums(req *Request, cells []ir.Cell, counts []Answer,
	valuesCount func(c ir.Cell, col string, s ir.SumValue) int64,
	noisySum func(c ir.Cell, col string, s ir.SumValue) float64) []Answer {
	cols := req.Query.SumColumns()
	for i, c := range cells {
		if counts[i].Suppressed || counts[i].Dropped {
			continue
		}
		out := make([]ir.SumValue, len(c.Sums))
		for k, s := range c.Sums {
			if s.N <= 0 {
				continue
			}
			n := counts[i].Int
			if s.N != c.Count {
				n = valuesCount(c, cols[k], s)
			}
			n = max(n, 1)
			out[k] = publishedSum(s, n, keepInBounds(req, cols[k], n, noisySum(c, cols[k], s)))
		}
		counts[i].Sums = &Sums{Columns: out}
	}
	return counts
}

// Pg_diffix's outlier and top-group sizes.
const (
	layeredOutliersMin = 1
	layeredTopMin      = 3
)

func (*layered) AnswersSums() bool                  { return true }
func (*layered) ClampsSums() bool                   { return true }
func (*layered) Price(req *Request) (Charge, error) { return Charge{}, checkSumBounds(req) }

// flattened is Diffix's flattening of a cell's contributions to one
// column: the sum with its outliers brought down to the top group's
// average, and that average (what the noise scales with).
func (m *layered) flattened(s ir.SumValue, key uint32, col string) (sum, topAvg float64) {
	label := fmt.Sprintf("sum sizes\x00%s\x00%d", col, key)
	outliers := layeredOutliersMin + int(m.unit(label+"\x00outliers")*2)
	top := layeredTopMin + int(m.unit(label+"\x00top")*2)
	contr := signedTop(s, len(s.Contributions))
	outliers = min(outliers, max(len(contr)-1, 0))
	group := contr[outliers:min(len(contr), outliers+top)]
	for _, x := range group {
		topAvg += math.Abs(x)
	}
	if len(group) > 0 {
		topAvg /= float64(len(group))
	}
	sum = s.Clamped
	for _, x := range contr[:outliers] {
		if excess := math.Abs(x) - topAvg; excess > 0 {
			sum -= math.Copysign(excess, x)
		}
	}
	return sum, topAvg
}

// unit is a number in [0, 1) determined by the secret and label.
func (m *layered) unit(label string) float64 {
	return 0.5 * (1 + math.Erf(m.normal(label)/math.Sqrt2)) * (1 - 1e-12)
}

// sumLayers is the sum of a cell's layers for one figure (prefix): the
// count's layers, each seeded apart by prefix.
func (m *layered) sumLayers(prefix string, req *Request, c ir.Cell) float64 {
	z := 0.0
	for _, l := range m.layers(req.Result.Conditions, req.Query.GroupBy, c.Group, c.Key) {
		z += m.normal(prefix + "\x00" + l.label)
	}
	return z
}

// answerSums adds Diffix's sum noise to each published cell's sums.
func (m *layered) answerSums(req *Request, cells []ir.Cell, counts []Answer) []Answer {
	return publishNoisySums(req, cells, counts,
		func(c ir.Cell, col string, s ir.SumValue) int64 {
			return roundCount(float64(s.N) + m.sd*m.sumLayers("values\x00"+col, req, c))
		},
		func(c ir.Cell, col string, s ir.SumValue) float64 {
			sum, topAvg := m.flattened(s, c.Key, col)
			return sum + m.sd*topAvg*m.sumLayers("sum\x00"+col, req, c)
		})
}
