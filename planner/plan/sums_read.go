package plan

import (
	"context"
	"fmt"
	"math/big"
	"strconv"

	"countwall/ir"
)

// SumsLayout is the row the SQL of a query with sums returns: the group
// columns, then (PerUnit) the privacy unit, NULL for the rows without one,
// the row count, and per summed column its count of values, its sum
// (an integer column's in two halves, v>>32 and v&(2^32-1), a real
// column's in one), then its clamped sum when Clamped.
type SumsLayout struct {
	Groups     int
	PerUnit    bool
	Integer    []bool // per summed column
	Clamped    bool
	TopK       int
	Contribute bool
	// Keyed asks for each cell's units and contributor key from the
	// per-unit rows: Key is the sum of plan.RecordKey of the units under
	// Secret, as for counts.
	Keyed bool
	// MaxCells, when positive, stops the read past that many cells: the
	// accumulator then refuses the query for its groups. Bounded rows are
	// read to the end (a unit's dropped cells are not answered).
	MaxCells int
	// Bounded rows are per cell and unit with the unit's value in the place
	// of PerUnit's flag, folded under Bounds (Needs.Bound, sums_bounded.go);
	// Rank and Secret choose a unit's cells as a bounded count's are chosen;
	// Secret also keys the units when Keyed.
	Bounded bool
	Bounds  ir.Bounds
	Rank    bool
	Secret  []byte
}

// NewSumsLayout is the layout the sums SQL of q under needs has.
func NewSumsLayout(t *ir.Table, q *ir.Query, needs ir.Needs) SumsLayout {
	l := SumsLayout{Groups: len(q.GroupBy), PerUnit: PerUnitSums(needs),
		Clamped: needs.Clamp || needs.Contributions || needs.Bound,
		TopK:    needs.TopContributions, Contribute: needs.Contributions, Bounded: needs.Bound,
		Keyed: (needs.Units || needs.Key) && !needs.Bound}
	for _, name := range q.SumColumns() {
		l.Integer = append(l.Integer, t.Columns[name].Type == ir.TypeInt)
	}
	return l
}

// PerUnitSums reports whether the sums of a query under needs are read one
// row per cell and privacy unit: for contributions, units, keys or bounds.
func PerUnitSums(needs ir.Needs) bool {
	return needs.Contributions || needs.Units || needs.Key || needs.Bound
}

// ScanSums runs the sums SQL and hands add each cell, folded from its rows
// (one per cell, or one per cell and unit), in the order the cells first
// appear.
func ScanSums(ctx context.Context, rd Querier, text string, args []any, l SumsLayout, add func(ir.Cell) error) error {
	rows, err := rd.QueryContext(ctx, text, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	width := l.Groups + 1
	if l.PerUnit {
		width++
	}
	for _, integer := range l.Integer {
		width += 2
		if integer {
			width++
		}
		if l.Clamped {
			width++
		}
	}
	vals := make([]any, width)
	dest := make([]any, width)
	for i := range vals {
		dest[i] = &vals[i]
	}
	var order []string
	cells := map[string]*ir.Cell{}
	merge := func(c ir.Cell) {
		key := GroupKey(c.Group)
		if prior, ok := cells[key]; ok {
			prior.Count += c.Count
			prior.Units += c.Units
			prior.Key += c.Key
			AddSums(prior.Sums, c.Sums)
			return
		}
		order = append(order, key)
		cells[key] = &c
	}
	var fold *boundedSums
	if l.Bounded {
		fold = newBoundedSums(l)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		c, err := l.cell(vals)
		if err != nil {
			return err
		}
		if fold != nil {
			fold.add(vals[l.Groups], vals[:l.Groups], c)
			continue
		}
		merge(c)
		if l.MaxCells > 0 && len(order) > l.MaxCells {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if fold != nil {
		fold.finish(merge)
	}
	for _, key := range order {
		c := cells[key]
		for i := range c.Sums {
			c.Sums[i].Contributions = TopContributions(c.Sums[i].Contributions, l.TopK)
		}
		if err := add(*c); err != nil {
			return err
		}
	}
	return nil
}

// cell reads one row of the layout.
func (l SumsLayout) cell(vals []any) (ir.Cell, error) {
	c := ir.Cell{InDomain: true, Sums: make([]ir.SumValue, len(l.Integer))}
	if l.Groups > 0 {
		c.Group = make([]ir.GroupValue, l.Groups)
		for i := range c.Group {
			c.Group[i] = GroupValueOf(vals[i])
		}
	}
	i := l.Groups
	unit := false
	if l.PerUnit { // the unit's value (a bounded read's is folded by ScanSums)
		unit, i = vals[i] != nil, i+1
		if unit && l.Keyed {
			c.Units, c.Key = 1, RecordKey(l.Secret, vals[i-1])
		}
	}
	count, err := intOf(vals[i])
	if err != nil {
		return c, err
	}
	c.Count, i = count.Int64(), i+1
	for k, integer := range l.Integer {
		s := &c.Sums[k]
		n, err := intOf(vals[i])
		if err != nil {
			return c, err
		}
		s.N, i = n.Int64(), i+1
		if integer {
			hi, err := intOf(vals[i])
			if err != nil {
				return c, err
			}
			lo, err := intOf(vals[i+1])
			if err != nil {
				return c, err
			}
			s.Int = new(big.Int)
			AddSplit(s.Int, hi, lo)
			i += 2
		} else {
			if s.Float, err = floatOf(vals[i]); err != nil {
				return c, err
			}
			i++
		}
		if l.Clamped {
			if s.Clamped, err = floatOf(vals[i]); err != nil {
				return c, err
			}
			i++
			if l.Contribute && unit {
				s.Contributions = []float64{s.Clamped}
			}
		}
	}
	return c, nil
}

// intOf reads an integer aggregate: SQLite's int64, PostgreSQL's bigint, or
// its numeric (the sum of a bigint) as text; NULL (a sum of nothing) is 0.
func intOf(v any) (*big.Int, error) {
	switch v := v.(type) {
	case nil:
		return new(big.Int), nil
	case int64:
		return big.NewInt(v), nil
	case []byte:
		return intOf(string(v))
	case string:
		n, ok := new(big.Int).SetString(v, 10)
		if !ok {
			return nil, fmt.Errorf("planner: a sum reads as %d characters that are not an integer", len(v))
		}
		return n, nil
	case float64:
		// SQLite gives a real for an integer sum that overflowed; the halves
		// never do.
		return nil, fmt.Errorf("planner: an integer sum came back as a real")
	}
	return nil, fmt.Errorf("planner: an integer sum came back as %T", v)
}

// floatOf reads a real aggregate; NULL is 0.
func floatOf(v any) (float64, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case float64:
		return v, nil
	case int64:
		return float64(v), nil
	case []byte:
		return floatOf(string(v))
	case string:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, fmt.Errorf("planner: a real sum reads as %d characters that are not a number", len(v))
		}
		return f, nil
	}
	return 0, fmt.Errorf("planner: a real sum came back as %T", v)
}

// ReadSums runs the sums SQL and assembles the output cells, as ReadCells
// does for counts.
func ReadSums(ctx context.Context, rd Querier, text string, args []any, shape *Shape, l SumsLayout) ([]ir.Cell, bool, error) {
	acc := shape.NewAccumulator()
	if shape.Product == nil {
		l.MaxCells = shape.MaxGroups
	}
	if err := ScanSums(ctx, rd, text, args, l, acc.Add); err != nil {
		return nil, false, err
	}
	cells := acc.Result()
	shape.Order(cells)
	return cells, shape.Complete, nil
}
