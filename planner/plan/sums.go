package plan

import (
	"cmp"
	"math/big"
	"math/bits"
	"slices"

	"countwall/ir"
	"countwall/pgerror"
)

// What every backend shares for a query with sums: the checks before a run,
// an exact 128-bit integer accumulator, and the contributions' order.

// checkSums refuses, before any read, a query with sums that a backend
// cannot compute as asked: a summed column that is not numeric, clamping
// without declared bounds, and contributions or contributor keys beside
// bounded sums. Units and contributor keys otherwise come from the
// per-unit pass that contributions use.
func checkSums(t *ir.Table, q *ir.Query, needs ir.Needs) error {
	if !q.HasSums() {
		return nil
	}
	if needs.Bound && (needs.Contributions || needs.Key) {
		return pgerror.Errorf(pgerror.InternalError, "planner: contributions and contributor keys are not computed beside bounded SUM and AVG")
	}
	for _, name := range q.SumColumns() {
		col := t.Columns[name]
		switch {
		case col == nil:
			return pgerror.Errorf(pgerror.InternalError, "column %q is not in the catalog of table %q", name, t.Name)
		case col.Type == ir.TypeText:
			return pgerror.Errorf(pgerror.InternalError, "planner: column %q is text and cannot be summed", name)
		case (needs.Clamp || needs.Contributions || needs.Bound) && col.Bounds == nil:
			return pgerror.Errorf(pgerror.FeatureNotSupported, "SUM and AVG over column %q need its public bounds", name).
				WithHint("declare them in the config: tables." + t.Name + ".bounds." + name + ": {min: ..., max: ...}")
		}
	}
	return nil
}

// Int128 is an exact integer sum of int64 values: 2^63 values of any size
// fit. Add does the same work whatever it adds, so that an oblivious pass
// takes the same time for every value.
type Int128 struct {
	Hi int64
	Lo uint64
}

// Add adds v.
func (a *Int128) Add(v int64) {
	var carry uint64
	a.Lo, carry = bits.Add64(a.Lo, uint64(v), 0)
	a.Hi += int64(carry) + v>>63 // v>>63 is -1 for a negative v: its sign extension
}

// AddSplit adds hi*2^32 + lo, the halves SQL sums an integer column in (so
// that no SQL sum overflows): hi the sum of v>>32, lo the sum of v&(2^32-1).
func AddSplit(sum *big.Int, hi, lo *big.Int) {
	if hi != nil {
		sum.Add(sum, new(big.Int).Lsh(hi, 32))
	}
	if lo != nil {
		sum.Add(sum, lo)
	}
}

// Big is the sum as a big.Int.
func (a Int128) Big() *big.Int {
	b := new(big.Int).SetInt64(a.Hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(a.Lo))
}

// TopContributions orders contributions largest first and keeps the
// largest k (all when k <= 0).
func TopContributions(c []float64, k int) []float64 {
	slices.SortFunc(c, func(a, b float64) int { return cmp.Compare(b, a) })
	if k > 0 && len(c) > k {
		c = c[:k:k]
	}
	return c
}

// NewSums are a cell's empty sums for q: zero, exact for integer columns.
func NewSums(t *ir.Table, q *ir.Query) []ir.SumValue {
	cols := q.SumColumns()
	if len(cols) == 0 {
		return nil
	}
	sums := make([]ir.SumValue, len(cols))
	for i, c := range cols {
		if t.Columns[c].Type == ir.TypeInt {
			sums[i].Int = new(big.Int)
		}
	}
	return sums
}

// AddSums adds cell b's sums into a's (the same columns).
func AddSums(a, b []ir.SumValue) {
	for i := range b {
		a[i].N += b[i].N
		a[i].Float += b[i].Float
		a[i].Clamped += b[i].Clamped
		if b[i].Int != nil {
			if a[i].Int == nil {
				a[i].Int = new(big.Int)
			}
			a[i].Int.Add(a[i].Int, b[i].Int)
		}
		a[i].Contributions = append(a[i].Contributions, b[i].Contributions...)
	}
}
