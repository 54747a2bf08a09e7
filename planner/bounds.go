package planner

import (
	"context"
	"countwall/ir"
	"errors"
	"fmt"
)

// effectiveBounds are the bounds a bounded Run enforces on q, and whether
// the unit's cells must be chosen (ranked) to keep G of them.
//
// A COUNT(DISTINCT unit) counts a unit once per cell whatever C says. G is
// lowered to the number of cells when that is known (a plain COUNT has one,
// a domain-complete GROUP BY its domain product): a unit cannot be in more
// cells than there are, and then no cells need to be chosen.
func effectiveBounds(t *ir.Table, q *ir.Query, needs ir.Needs, shape *cellShape) (b ir.Bounds, rank bool) {
	b = t.ContributionBounds(needs.Bounds)
	if q.Agg == ir.CountDistinct {
		b.MaxRowsPerUnit = 1
	}
	cells := int64(-1) // unknown
	switch {
	case len(q.GroupBy) == 0:
		cells = 1
	case shape.complete:
		cells = int64(len(shape.product))
	}
	if cells >= 0 && b.MaxGroupsPerUnit >= cells {
		return ir.Bounds{MaxRowsPerUnit: b.MaxRowsPerUnit, MaxGroupsPerUnit: max(cells, 1)}, false
	}
	return b, true
}

// PlanBounds are the bounds a bounded Run of q will enforce, known from the
// schema alone: a mechanism prices a query with them before any row is read.
func PlanBounds(t *ir.Table, q *ir.Query, needs ir.Needs) (ir.Bounds, error) {
	shape, err := newCellShape(t, q)
	if err != nil {
		return ir.Bounds{}, err
	}
	b, _ := effectiveBounds(t, q, needs, shape)
	return b, nil
}

// ErrNotUnitKeyed is returned for a table declared unit_keyed whose rows
// do not each have a unit of their own.
var ErrNotUnitKeyed = errors.New("the table is declared unit_keyed, but some privacy unit has several rows or a row has none; correct the table or remove unit_keyed from the config")

// CheckUnitKeyed verifies a table's unit_keyed declaration: no row without a
// unit, no unit with two rows. The error names no value.
func (s *Store) CheckUnitKeyed(ctx context.Context, t *ir.Table) error {
	unit, table := quoteIdent(t.PrivacyUnit), quoteIdent(t.Name)
	var broken int
	err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM (SELECT 1 FROM "+table+" WHERE "+unit+" IS NULL "+
		"UNION ALL SELECT 1 FROM (SELECT 1 FROM "+table+" GROUP BY "+unit+" HAVING COUNT(*) > 1) AS dup) AS broken").Scan(&broken)
	if err != nil {
		return fmt.Errorf("planner: checking that table %q is keyed by its unit: %w", t.Name, err)
	}
	if broken > 0 {
		return ErrNotUnitKeyed
	}
	return nil
}
