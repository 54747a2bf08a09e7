package ir

import "math/big"

// AggFunc is the function of one aggregate in a select list.
type AggFunc int

// The aggregate functions. A COUNT is what Query.Agg says it counts.
const (
	FuncCount AggFunc = iota
	FuncSum
	FuncAvg
)

func (f AggFunc) String() string {
	switch f {
	case FuncSum:
		return "sum"
	case FuncAvg:
		return "avg"
	default:
		return "count"
	}
}

// Aggregate is one aggregate of a select list that has a SUM or an AVG.
type Aggregate struct {
	Func   AggFunc
	Column string // the summed or averaged column; "" for COUNT
	Alias  string // the output column's name
	// Position is the aggregate's place in the select list (0-based, among
	// the group columns and the aggregates): the group columns take the
	// places the aggregates leave, in GroupBy order.
	Position int
}

// HasSums reports whether q selects a SUM or an AVG: its Aggregates then
// list every aggregate of its select list, in the order written. A query
// without one keeps the COUNT vocabulary alone (Agg, Threshold, Alias).
func (q *Query) HasSums() bool { return len(q.Aggregates) > 0 }

// SumColumns are the distinct columns q sums or averages, in select-list
// order.
func (q *Query) SumColumns() []string {
	var cols []string
	for _, a := range q.Aggregates {
		if a.Func == FuncCount {
			continue
		}
		seen := false
		for _, c := range cols {
			seen = seen || c == a.Column
		}
		if !seen {
			cols = append(cols, a.Column)
		}
	}
	return cols
}

// ValueBounds are a numeric column's public bounds (tables.T.bounds.col):
// mechanisms that need them clamp each value into [Min, Max] before
// summing, so that one value moves a sum by at most max(|Min|, |Max|).
type ValueBounds struct {
	Min, Max float64
}

// Clamp is x moved into the bounds.
func (b ValueBounds) Clamp(x float64) float64 {
	switch {
	case x < b.Min:
		return b.Min
	case x > b.Max:
		return b.Max
	}
	return x
}

// SumValue is one summed column's figures in a cell (Cell.Sums holds one per
// column of Query.SumColumns): what SUM and AVG over it are computed from.
// Values that are NULL, or not numbers of the column's type, are left out,
// as PostgreSQL leaves NULL out.
type SumValue struct {
	// N is how many values were summed: SUM and AVG are NULL when it is 0.
	N int64
	// Int is the exact sum of an integer column (nil for a real one): it
	// never overflows, as PostgreSQL's sum(bigint) is numeric.
	Int *big.Int
	// Float is the sum of a real column, in double precision.
	Float float64
	// Clamped is the sum of the values clamped to the column's bounds, when
	// Needs.Clamp.
	Clamped float64
	// Contributions are, when Needs.Contributions, each privacy unit's
	// total of clamped values in the cell, largest first (the largest
	// Needs.TopContributions when that is positive). Rows without a unit
	// are in the sums but no unit's contribution.
	Contributions []float64
}
