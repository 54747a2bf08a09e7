package plan

import (
	"countwall/ir"
	"errors"
)

// EffectiveBounds are the bounds a bounded Run enforces on q, and whether
// the unit's cells must be chosen (ranked) to keep G of them.
//
// A COUNT(DISTINCT unit) counts a unit once per cell whatever C says. G is
// lowered to the number of cells when that is known (a plain COUNT has one,
// a domain-complete GROUP BY its domain product): a unit cannot be in more
// cells than there are, and then no cells need to be chosen.
func EffectiveBounds(t *ir.Table, q *ir.Query, needs ir.Needs, shape *Shape) (b ir.Bounds, rank bool) {
	b = t.ContributionBounds(needs.Bounds)
	if q.Agg == ir.CountDistinct {
		b.MaxRowsPerUnit = 1
	}
	cells := int64(-1) // unknown
	switch {
	case len(q.GroupBy) == 0:
		cells = 1
	case shape.Complete:
		cells = int64(len(shape.Product))
	}
	if cells >= 0 && b.MaxGroupsPerUnit >= cells {
		return ir.Bounds{MaxRowsPerUnit: b.MaxRowsPerUnit, MaxGroupsPerUnit: max(cells, 1)}, false
	}
	return b, true
}

// Bounds are the bounds a bounded Run of q will enforce, known from the
// schema alone: a mechanism prices a query with them before any row is read.
func Bounds(t *ir.Table, q *ir.Query, needs ir.Needs) (ir.Bounds, error) {
	shape, err := NewShape(t, q)
	if err != nil {
		return ir.Bounds{}, err
	}
	b, _ := EffectiveBounds(t, q, needs, shape)
	return b, nil
}

// ErrNotUnitKeyed is returned for a table declared unit_keyed whose rows
// do not each have a unit of their own.
var ErrNotUnitKeyed = errors.New("the table is declared unit_keyed, but some privacy unit has several rows or a row has none; correct the table or remove unit_keyed from the config")
