package plan

import (
	"cmp"
	"slices"

	"countwall/ir"
)

// Sums bounded per privacy unit (Needs.Bound), folded in Go from one row
// per cell and unit, as a bounded count's cells are chosen: rows without a
// unit are left out, and a unit in more than G cells keeps the G of smallest
// keyed hash (CellRank), a choice that depends on who the unit is and the
// secret, never on the values.
//
// Within a cell a unit adds at most C rows to the count and at most C
// values to each column's count of values, and to the clamped sum the total
// of its values, each clamped to the column's bounds, scaled by C/n when it
// has n > C values (C times the mean of its values). A unit's part of a
// clamped sum is then within [k*min, k*max] for the k <= C values it is
// counted with, so that one unit moves a cell's clamped sum by at most
// C*max(|min|, |max|), its count of values by at most C, and at most G
// cells: what laplace and gaussian calibrate their noise to. Cell.Units is
// the units the cell keeps, which partition selection reads.

// boundedSums collects each unit's rows until the read ends. The rows come
// ordered by cell and then unit (the bounded sums SQL's ORDER BY), and the
// kept ones are merged in that order, so that each cell adds its units'
// parts in the unit's order: the snapshot adds them in the same order, and
// the two paths' floating-point sums agree to the bit.
type boundedSums struct {
	l     SumsLayout
	read  []unitCell       // every (cell, unit) row, in the order read
	units map[string][]int // by unit, its rows' places in read
	order []string         // units in the order first read
}

// unitCell is one unit's figures in one cell, unbounded yet.
type unitCell struct {
	unit    any
	raw     []any // the group values as read, for the unit's rank
	key     string
	cell    ir.Cell
	rank    int64
	dropped bool // past the unit's G cells
}

func newBoundedSums(l SumsLayout) *boundedSums {
	return &boundedSums{l: l, units: map[string][]int{}}
}

// add keeps one row's figures for its unit. The read is not stopped at
// MaxCells: the cells a unit drops under G are not answered, and the
// accumulator refuses too many of the cells kept, as the snapshot does.
func (f *boundedSums) add(unit any, groups []any, c ir.Cell) {
	if unit == nil {
		return // a row without a unit counts for nothing under bounds
	}
	unit = ownValue(unit)
	raw := make([]any, len(groups))
	for i, g := range groups {
		raw[i] = ownValue(g)
	}
	id := string(appendRankValue(nil, unit))
	if _, ok := f.units[id]; !ok {
		f.order = append(f.order, id)
	}
	f.units[id] = append(f.units[id], len(f.read))
	f.read = append(f.read, unitCell{unit: unit, raw: raw, key: GroupKey(c.Group), cell: c})
}

// ownValue copies a driver's byte slice, which the next row may reuse.
func ownValue(v any) any {
	if b, ok := v.([]byte); ok {
		return slices.Clone(b)
	}
	return v
}

// finish bounds each unit and hands merge each unit's part of each kept
// cell, in the order read.
func (f *boundedSums) finish(merge func(ir.Cell)) {
	b := f.l.Bounds
	for _, id := range f.order {
		places := f.units[id]
		if !f.l.Rank || int64(len(places)) <= b.MaxGroupsPerUnit {
			continue
		}
		for _, i := range places {
			uc := &f.read[i]
			uc.rank = CellRank(f.l.Secret, uc.unit, uc.raw...)
		}
		slices.SortFunc(places, func(x, y int) int {
			return cmp.Or(cmp.Compare(f.read[x].rank, f.read[y].rank), cmp.Compare(f.read[x].key, f.read[y].key))
		})
		for _, i := range places[b.MaxGroupsPerUnit:] {
			f.read[i].dropped = true
		}
	}
	for _, uc := range f.read {
		if !uc.dropped {
			merge(boundUnitCell(uc.cell, b.MaxRowsPerUnit))
		}
	}
}

// boundUnitCell is one unit's part of a cell under C rows per unit.
func boundUnitCell(c ir.Cell, rows int64) ir.Cell {
	c.Count = min(c.Count, rows)
	c.Units = 1
	for k := range c.Sums {
		s := &c.Sums[k]
		if s.N > rows {
			s.Clamped *= float64(rows) / float64(s.N)
			s.N = rows
		}
	}
	return c
}

// UnitKeyedSums are the needs a backend computes bounded sums of a table
// declared unit_keyed with (each unit one row, no row without one): there
// every unit is in one cell with one row, so the bounded figures are the
// clamped ones and each cell's units its rows (UnitsFromRows). ok is false
// for any other table or needs.
func UnitKeyedSums(t *ir.Table, q *ir.Query, needs ir.Needs) (ir.Needs, bool) {
	if !q.HasSums() || !needs.Bound || !t.UnitKeyed {
		return needs, false
	}
	needs.Bound, needs.Units, needs.Clamp = false, false, true
	return needs, true
}

// UnitsFromRows sets each cell's units to its rows (UnitKeyedSums).
func UnitsFromRows(cells []ir.Cell) {
	for i := range cells {
		cells[i].Units = cells[i].Count
	}
}
