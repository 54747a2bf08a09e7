package mechanisms

import (
	"cmp"
	"math"
	"math/big"
	"slices"

	"countwall/ir"
	"countwall/pgerror"
)

// What the statistical offices' mechanisms (suppress, cellkey, bounded,
// layered) share for SUM and AVG: every value is clamped to its column's
// declared bounds before it is summed, so that the rules judge what is
// published, and each cell's contributions are read per privacy unit after
// its rows are summed.

// ClampsSums reports whether m publishes sums of values clamped to their
// columns' bounds (tables.T.bounds), which EXPLAIN then states.
func ClampsSums(m Mechanism) bool {
	c, ok := m.(interface{ ClampsSums() bool })
	return ok && c.ClampsSums()
}

// checkSumBounds refuses, before the read, a query that sums a column
// without declared bounds: the mechanisms that clamp need them, and the
// planner would refuse the same query only once the answer had been priced.
func checkSumBounds(req *Request) error {
	if req == nil || req.Query == nil || !req.Query.HasSums() || req.Table == nil {
		return nil
	}
	for _, name := range req.Query.SumColumns() {
		if col := req.Table.Columns[name]; col == nil || col.Bounds == nil {
			return pgerror.Errorf(pgerror.FeatureNotSupported, "SUM and AVG over column %q need its public bounds", name).
				WithHint("declare them in the config: tables." + req.Table.Name + ".bounds." + name + ": {min: ..., max: ...}")
		}
	}
	return nil
}

// publishedSum is the figure a mechanism publishes for one summed column:
// n values summing to sum, an integer column's sum rounded to an integer
// (NULL, as PostgreSQL's, when n is 0).
func publishedSum(truth ir.SumValue, n int64, sum float64) ir.SumValue {
	out := ir.SumValue{N: n}
	if n <= 0 {
		return ir.SumValue{}
	}
	if truth.Int != nil {
		out.Int = roundedBig(sum)
		return out
	}
	out.Float = sum
	return out
}

// roundedBig is x rounded to the nearest integer, as a big.Int; a value
// that is not finite (never, for clamped sums) is 0.
func roundedBig(x float64) *big.Int {
	r := math.Round(x)
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return new(big.Int)
	}
	b, _ := big.NewFloat(r).Int(nil)
	return b
}

// magnitudes are a cell's contributions to one summed column as the
// magnitude rules read them: each unit's total, and the rows without a
// unit as one more contributor (they may all be one person's), in absolute
// value, largest first. A negative total is as revealing as a positive one.
func magnitudes(s ir.SumValue) []float64 {
	out := make([]float64, 0, len(s.Contributions)+1)
	rest := s.Clamped
	for _, c := range s.Contributions {
		out = append(out, math.Abs(c))
		rest -= c
	}
	if math.Abs(rest) > 1e-9*max(1, math.Abs(s.Clamped)) {
		out = append(out, math.Abs(rest))
	}
	slices.SortFunc(out, func(a, b float64) int { return cmp.Compare(b, a) })
	return out
}

// signedTop are a cell's k contributions largest in absolute value, with
// their signs, largest first: what the cell key method perturbs.
func signedTop(s ir.SumValue, k int) []float64 {
	out := slices.Clone(s.Contributions)
	slices.SortStableFunc(out, func(a, b float64) int { return cmp.Compare(math.Abs(b), math.Abs(a)) })
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// cellMagnitude is a cell's size for choosing complementary suppressions:
// the absolute clamped totals of its summed columns.
func cellMagnitude(c ir.Cell) float64 {
	m := 0.0
	for _, s := range c.Sums {
		m += math.Abs(s.Clamped)
	}
	return m
}
