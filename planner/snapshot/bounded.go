package snapshot

import (
	"math"
	"math/bits"
	"strings"

	"countwall/ir"
	"countwall/planner/plan"
)

// Bounded counts in memory. A count bounded per privacy unit (Needs.Bound)
// is, per cell, the sum over units of min(rows of the unit in the cell, C),
// after each unit has kept at most G of its cells, those of smallest keyed
// hash (CellRank). compileBounded says it in SQL; here the same figures come
// from the snapshot, whose rows are numbered in the unit's order so that
// each unit's rows are one run: a COUNT takes C word operations per 64 rows
// (or a popcount per unit), whichever rows match, and the order of every
// unit's cells under a GROUP BY shape is computed once per snapshot and
// secret, for the whole table, so that neither the first query of a shape
// nor any later one does work that depends on which units have several
// rows.

// answerBounded computes the bounded cells of q, or returns ok false when the
// snapshot declines the query (SQLite answers it instead), for the same
// reasons answer declines one. b and rank are effectiveBounds'.
func (snap *Table) answerBounded(t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte, shape *plan.Shape, b ir.Bounds, rank bool) (*ir.Result, bool, error) {
	unit := snap.columns[strings.ToLower(t.PrivacyUnit)]
	// Contributor keys are not computed under bounds: SQLite's bounding SQL
	// refuses them, and so the query is left to it.
	if unit == nil || !unit.countsUnits(needs.Oblivious) || needs.Key {
		return nil, false, nil
	}
	groups, ok := snap.groupColumns(t, q)
	if !ok {
		return nil, false, nil
	}
	if _, ok := groupRadix(groups); !ok {
		return nil, false, nil
	}
	ev := newSnapEval(snap, t, needs)
	defer ev.release()
	matched, ok := ev.matched(q)
	if !ok {
		return nil, false, nil
	}
	perRow := b.MaxRowsPerUnit
	if q.Agg == ir.CountDistinct {
		perRow = 1
	}
	var cells []ir.Cell
	if len(groups) == 0 {
		cells = []ir.Cell{snap.boundedCount(matched, unit, perRow, needs)}
	} else {
		// Without rank every unit keeps all its cells; the oblivious path
		// visits them through the cell order all the same.
		var order *cellOrder
		maxCells := int64(math.MaxInt64)
		if rank {
			maxCells = b.MaxGroupsPerUnit
		}
		if rank || needs.Oblivious {
			order = snap.cellOrder(unit, groups, secret)
		}
		cells = snap.boundedGroups(matched, unit, groups, order, maxCells, perRow, needs)
	}
	res, err := snap.result(shape, cells, q, needs)
	return res, true, err
}

// boundedCount is the one cell of a bounded COUNT: the matching rows of each
// unit, at most perRow of them, summed over units. The rows are in the
// unit's order (Store.Answer sees to it), each unit's rows one run.
func (snap *Table) boundedCount(matched bitset, unit *snapColumn, perRow int64, needs ir.Needs) ir.Cell {
	if perRow <= maxRounds {
		return boundedCountByRounds(matched, snap.runs, perRow, needs)
	}
	return boundedCountByRuns(matched, unit, perRow, needs)
}

// boundedCountByRuns is boundedCount on rows numbered in the unit's order,
// where unit u's rows are the run prefix[u]..prefix[u+1]-1: its matching
// rows are the matching rows before prefix[u+1] less those before
// prefix[u], each a running popcount plus one word's. It visits every unit
// once, without a branch on the rows, so its time follows the table's
// number of units and not the rows the condition holds on.
func boundedCountByRuns(matched bitset, unit *snapColumn, perRow int64, needs ir.Needs) ir.Cell {
	c := ir.Cell{InDomain: true}
	first, n := int(unit.firstNonNull()), len(unit.values)
	if first >= n {
		return c
	}
	scratch := counterScratch.take(len(matched) + 1)
	before := *scratch // before[w]: matching rows in the words ahead of word w
	before[0] = 0
	for w, bits64 := range matched {
		before[w+1] = before[w] + int64(bits.OnesCount64(bits64))
	}
	// The units' runs end at prefix[first+1..n]; the last ends at the row
	// count, with every matching row before it.
	var count, units int64
	ends := unit.prefix[first+1 : n+1]
	from := matchedBelow(matched, before, unit.prefix[first])
	for _, end := range ends[:len(ends)-1] {
		to := matchedBelow(matched, before, end)
		rows := to - from
		from = to
		count += min(rows, perRow)
		units -= (-rows) >> 63 // 1 when rows > 0
	}
	last := before[len(matched)] - from
	count += min(last, perRow)
	units -= (-last) >> 63
	counterScratch.put(scratch)
	c.Count = count
	if needs.Units {
		c.Units = units
	}
	return c
}

// maxRounds is the largest C boundedCountByRounds takes: its work is
// C passes' worth over the rows' words.
const maxRounds = 8

// boundedCountByRounds is boundedCount on rows numbered in the unit's
// order, 64 rows at a time: round k takes each unit's (k+1)-th matching
// row (unitRuns' kernels), and the count is the rows taken in perRow rounds,
// four to a pass over the words. Its work is the same whichever rows match.
func boundedCountByRounds(matched bitset, runs *unitRuns, perRow int64, needs ir.Needs) ir.Cell {
	c := ir.Cell{InDomain: true}
	if perRow <= 4 && !needs.Units {
		c.Count = runs.countFirst(matched, int(perRow))
		return c
	}
	// The first pass counts the units; a C past four keeps the rows not
	// yet taken for the next pass.
	scratch := wordScratch.take(len(matched))
	left := *scratch
	count, units := runs.takeFirst(matched, left, int(min(perRow, 4)))
	for done := int64(4); done < perRow; done += 4 {
		taken, _ := runs.takeFirst(left, left, int(min(perRow-done, 4)))
		count += taken
	}
	wordScratch.put(scratch)
	c.Count = count
	if needs.Units {
		c.Units = units
	}
	return c
}

// matchedBelow is the number of matching rows numbered below r (r less than
// the row count), given before[w], the matching rows ahead of word w.
func matchedBelow(matched bitset, before []int64, r int32) int64 {
	w := uint(r) >> 6
	return before[w] + int64(bits.OnesCount64(matched[w]&(1<<(uint(r)&63)-1)))
}

// boundedGroups computes the bounded cells of a GROUP BY, in ascending cell
// number (the compiled SQL's order). Each unit's matching rows are visited
// together, one run of rows in the unit's order (Store.Answer sees to it); a
// unit in more than maxCells cells keeps the first maxCells of them in
// order's order, when order is given (always under needs.Oblivious, where
// every row and cell is visited).
func (snap *Table) boundedGroups(matched bitset, unit *snapColumn, groups []groupColumn, order *cellOrder, maxCells, perRow int64, needs ir.Needs) []ir.Cell {
	radix, _ := groupRadix(groups) // answerBounded checked that it fits
	totals := newCellTotals(radix, snap.rows)
	if needs.Oblivious {
		order.keepFirstOblivious(matched, unit, maxCells, perRow, totals)
		return totals.cells(groups, boundedFinish(needs))
	}
	if order != nil {
		order.keepFirst(matched, unit, maxCells, perRow, totals)
		return totals.cells(groups, boundedFinish(needs))
	}
	eachUnitCell(matched, unit, groups,
		func(_ uint32, gid uint64, rows int64) { totals.add(gid, min(rows, perRow), 1, 0) },
		func(uint64) {}) // rows without a unit count for nothing under bounds
	return totals.cells(groups, boundedFinish(needs))
}

// boundedFinish gives a bounded cell its units when needs asks for them.
func boundedFinish(needs ir.Needs) func(ir.Cell, int64, uint32) ir.Cell {
	return func(c ir.Cell, units int64, _ uint32) ir.Cell {
		if needs.Units {
			c.Units = units
		}
		return c
	}
}
