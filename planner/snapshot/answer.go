package snapshot

import (
	"fmt"
	"math/bits"
	"strings"

	"countwall/ir"
	"countwall/planner/plan"
)

// Plain counts: a query's cells from the rows its WHERE holds on, with the
// units and contributor keys needs asks for.

// answer computes a query's cells from the snapshot, or returns ok false when
// the snapshot declines the query (SQLite answers it instead). The figures are
// those the compiled SQL would return: counts, distinct non-NULL units and
// contributor keys per cell, cells in SQLite's GROUP BY order, then the same
// domain filling, group limit and ORDER BY as readCells.
func (snap *Table) answer(t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte, shape *plan.Shape) (*ir.Result, bool, error) {
	ev := newSnapEval(snap, t, needs)
	defer ev.release()
	withUnits := q.Agg == ir.CountDistinct || needs.Units || needs.Key
	var unit *snapColumn
	var keys, words []uint32
	if withUnits {
		if unit = snap.columns[strings.ToLower(t.PrivacyUnit)]; unit == nil || !unit.countsUnits(needs.Oblivious) {
			return nil, false, nil
		}
		if needs.Key {
			k := snap.recordKeys(unit, secret)
			keys, words = k.keys, k.words
		}
	}
	groups, ok := snap.groupColumns(t, q)
	if !ok {
		return nil, false, nil
	}

	var cells []ir.Cell
	// A table declared keyed by its unit has one row per unit (checked at
	// start, and here against the snapshot): its units are counted without
	// a set. The declaration, never the rows, picks that path.
	keyed := t.UnitKeyed
	if keyed && !snap.OnePerUnit(t.PrivacyUnit) {
		return nil, true, fmt.Errorf("planner: table %q: %w", t.Name, plan.ErrNotUnitKeyed)
	}
	if cell, ok := snap.oneConditionTally(ev, q, unit, keys, needs, keyed); ok {
		cells = []ir.Cell{cell}
	} else if grid, ok := snap.gridAnswer(ev, q, groups, unit, keys, needs, keyed); ok {
		cells = grid
	} else {
		matched, evaluated := ev.matched(q)
		if !evaluated {
			return nil, false, nil
		}
		var answered bool
		if cells, answered = snap.answerRows(matched, groups, unit, keys, words, needs, q.Agg, keyed); !answered {
			return nil, false, nil
		}
	}
	res, err := snap.result(shape, cells, q, needs)
	return res, true, err
}

// result lays out the snapshot's cells in the answer's shape (refusing more
// groups than the policy allows) with what else needs asks for.
func (snap *Table) result(shape *plan.Shape, cells []ir.Cell, q *ir.Query, needs ir.Needs) (*ir.Result, error) {
	acc := shape.NewAccumulator()
	for _, c := range cells {
		if err := acc.Add(c); err != nil {
			return nil, err
		}
	}
	res := &ir.Result{Cells: acc.Result(), DomainComplete: shape.Complete}
	shape.Order(res.Cells)
	if needs.TableSize {
		res.TableSize = int64(snap.rows)
	}
	if needs.Conditions {
		res.Conditions = plan.Conditions(q)
	}
	return res, nil
}

// answerRows computes the cells of the matched rows.
func (snap *Table) answerRows(matched bitset, groups []groupColumn, unit *snapColumn, keys, words []uint32, needs ir.Needs, agg ir.AggKind, keyed bool) ([]ir.Cell, bool) {
	if len(groups) == 0 {
		return []ir.Cell{tallyRows(matched, unit, keys, words, needs, agg, keyed, snap.runs)}, true
	}
	return groupCells(matched, groups, unit, keys, needs, agg, keyed)
}

// countsUnits reports whether the snapshot's distinct values of the unit
// column c are SQLite's distinct units. SQLite takes an integer and an
// equal real for one value, which the dictionary keeps apart; only a column
// without a declared type (no affinity) can store both, since a numeric
// column stores an integral real as an integer and a text column stores
// numbers as text. Such a column holding both is left to SQLite; under
// oblivious (the claiming mechanisms) a column without a declared type is
// left to SQLite whatever it holds, so that no stored value decides the
// path.
func (c *snapColumn) countsUnits(oblivious bool) bool {
	switch {
	case c.collated:
		return false
	case c.affinity != affinityBlob:
		return true
	case oblivious:
		return false
	}
	return !(c.has[classInt] && c.has[classReal])
}

// tallyRows counts a row set's rows and, when unit is set, the distinct
// non-NULL units among them with the sum of their record keys (keys by unit
// code, words their sums per 64 codes): the path of every plain COUNT. When
// each unit value occupies one row (a table keyed by its unit), no set of
// seen units is needed.
func tallyRows(rows bitset, unit *snapColumn, keys, words []uint32, needs ir.Needs, agg ir.AggKind, keyed bool, runs *unitRuns) ir.Cell {
	c := ir.Cell{InDomain: true, Count: rows.count()}
	if unit == nil {
		return c
	}
	var units int64
	var key uint32
	if keyed {
		// Each unit is one row and no unit is NULL (OnePerUnit): the rows
		// are in the unit's order, so row r holds unit code r.
		units = c.Count
		if keys != nil {
			key = keyedKeySum(rows, keys, words)
		}
		return finishTally(c, units, key, needs, agg)
	}
	// The rows are in the unit's order: a unit is in the set once for the
	// first of its rows there, which one round of the run kernels finds.
	scratch := wordScratch.take(len(rows))
	left := *scratch
	units, _ = runs.takeFirst(rows, left, 1)
	if keys != nil {
		for wi, w := range rows {
			for first := w &^ unit.nulls[wi] &^ left[wi]; first != 0; first &= first - 1 {
				key += keys[unit.code(wi<<6|bits.TrailingZeros64(first))]
			}
		}
	}
	wordScratch.put(scratch)
	return finishTally(c, units, key, needs, agg)
}

func finishTally(c ir.Cell, units int64, key uint32, needs ir.Needs, agg ir.AggKind) ir.Cell {
	if agg == ir.CountDistinct {
		c.Count = units
	}
	if needs.Units || needs.Key {
		c.Units = units
	}
	if needs.Key {
		c.Key = key
	}
	return c
}

// groupCells splits the matching rows by the group columns' value codes. The
// dictionaries are in SQLite's sort order, so ascending codes give the cells
// in the order of the compiled SQL's ORDER BY.
func groupCells(matched bitset, groups []groupColumn, unit *snapColumn, keys []uint32, needs ir.Needs, agg ir.AggKind, keyed bool) ([]ir.Cell, bool) {
	radix, ok := groupRadix(groups)
	if !ok {
		return nil, false
	}
	key := func(u uint32) uint32 {
		if keys == nil {
			return 0
		}
		return keys[u]
	}
	if needs.Oblivious && (unit == nil || keyed) {
		return groupCellsOblivious(matched, groups, unit, keys, needs, agg, groups[0].rows()), true
	}
	if len(groups) == 1 && (unit == nil || keyed) { // totalled by value first
		counts, keySums := codeCounts(matched, groups[0].snapColumn, keys)
		return codeCells(groups[0], counts, keySums, unit != nil, needs, agg), true
	}
	totals := newCellTotals(radix, 64*len(matched))
	switch {
	case unit == nil: // rows counted, no units
		matched.each(func(r int) { totals.add(groupID(groups, r), 1, 0, 0) })
	case keyed: // each unit one row: its cell has it once
		matched.each(func(r int) {
			u := unit.code(r)
			if unit.values[u].class == classNull {
				totals.add(groupID(groups, r), 1, 0, 0)
				return
			}
			totals.add(groupID(groups, r), 1, 1, key(u))
		})
	default: // each unit's rows one run (Store.Answer sees to it): its cells found in it
		eachUnitCell(matched, unit, groups,
			func(u uint32, gid uint64, rows int64) { totals.add(gid, rows, 1, key(u)) },
			func(gid uint64) { totals.add(gid, 1, 0, 0) })
	}
	return totals.cells(groups, func(c ir.Cell, units int64, key uint32) ir.Cell {
		return finishTally(c, units, key, needs, agg)
	}), true
}

// codeCells are the cells of a GROUP BY on column g from the rows and key
// sums of each of its value codes. With units, the table is keyed by its
// unit: row r holds unit code r and no unit is NULL (OnePerUnit), so a
// value's units are its rows.
func codeCells(g groupColumn, counts []int64, keySums []uint32, units bool, needs ir.Needs, agg ir.AggKind) []ir.Cell {
	totals := newCellTotals(uint64(len(g.grouping.values)), len(counts))
	for code, n := range counts {
		if n == 0 {
			continue
		}
		u, key := int64(0), uint32(0)
		if units {
			u = n
		}
		if keySums != nil {
			key = keySums[code]
		}
		totals.add(uint64(g.grouping.group[code]), n, u, key)
	}
	return totals.cells([]groupColumn{g}, func(c ir.Cell, units int64, key uint32) ir.Cell {
		return finishTally(c, units, key, needs, agg)
	})
}
