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
	if perRow <= maxCarryRounds {
		return boundedCountByCarries(matched, snap.runEndsAhead, unit.nulls, perRow, needs)
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

// maxCarryRounds is the largest C boundedCountByCarries takes: its work is
// C passes' worth over the rows' words.
const maxCarryRounds = 8

// boundedCountByCarries is boundedCount on rows numbered in the unit's order,
// 64 rows at a time: round k finds each unit's (k+1)-th matching row, and the
// count is the rows found in perRow rounds. A row is a unit's first matching
// one when no matching row lies between its run's start and it, which is a
// carry: an addition propagates it along the run (no run starts ahead) and
// generates it at a matching row, and the carry out of a word goes on into
// the next. endsAhead has bit i set where row i+1 starts a run or is past
// the last row. Its work is the same whichever rows match: perRow rounds
// over the words, four to a pass.
func boundedCountByCarries(matched, endsAhead, nulls bitset, perRow int64, needs ir.Needs) ir.Cell {
	// A C of 4 or less is one pass that reads the matching rows and keeps
	// nothing; a larger C keeps the rows not yet found for the next pass.
	var left bitset
	var scratch *[]uint64
	if perRow > 4 {
		scratch = wordScratch.take(len(matched))
		left = *scratch
	}
	count, units := carryRounds(matched, nulls, endsAhead, left, int(min(perRow, 4)))
	for done := int64(4); done < perRow; done += 4 {
		taken, _ := carryRounds(left, nulls, endsAhead, left, int(min(perRow-done, 4)))
		count += taken
	}
	if scratch != nil {
		wordScratch.put(scratch)
	}
	c := ir.Cell{InDomain: true, Count: count}
	if needs.Units {
		c.Units = units
	}
	return c
}

// carryRounds takes out of the rows of in that are not NULL, in one pass,
// the first rounds (1 to 4) rows of each run, and returns how many it took
// in all and in the first round; the rows left are written to left unless
// it is nil (which may be in itself). Each round keeps its carry across
// words in a variable of its own.
func carryRounds(in, nulls, endsAhead, left bitset, rounds int) (taken, first int64) {
	nulls, endsAhead = nulls[:len(in)], endsAhead[:len(in)]
	keep := left != nil
	if keep {
		left = left[:len(in)]
	}
	var c0, c1, c2, c3 uint64
	var all, firsts int
	for w, m := range in {
		m &^= nulls[w]
		propagate := ^endsAhead[w]
		// Each step keeps the rows a matching row precedes in their run.
		g := m & propagate
		sum, c := bits.Add64(g, propagate, c0)
		rest := m & (sum ^ g ^ propagate)
		c0 = c
		firsts += bits.OnesCount64(m &^ rest)
		if rounds > 1 {
			g = rest & propagate
			sum, c = bits.Add64(g, propagate, c1)
			rest &= sum ^ g ^ propagate
			c1 = c
			if rounds > 2 {
				g = rest & propagate
				sum, c = bits.Add64(g, propagate, c2)
				rest &= sum ^ g ^ propagate
				c2 = c
				if rounds > 3 {
					g = rest & propagate
					sum, c = bits.Add64(g, propagate, c3)
					rest &= sum ^ g ^ propagate
					c3 = c
				}
			}
		}
		all += bits.OnesCount64(m &^ rest)
		if keep {
			left[w] = rest
		}
	}
	return int64(all), int64(firsts)
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
