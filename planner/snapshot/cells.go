package snapshot

import (
	"math/bits"
	"slices"

	"countwall/ir"
)

// A GROUP BY's cells: the number of each row's cell, the totals kept per
// cell, and the cells one unit's rows fall in.

// groupID numbers row r's cell: the group numbers of its columns in mixed
// radix, so that ascending numbers are the SQL's GROUP BY order.
func groupID(groups []groupColumn, r int) uint64 {
	gid := uint64(0)
	for _, g := range groups {
		gid = gid*uint64(len(g.grouping.values)) + uint64(g.grouping.group[g.code(r)])
	}
	return gid
}

// groupValues renders the cell numbered gid.
func groupValues(groups []groupColumn, gid uint64) []ir.GroupValue {
	vals := make([]ir.GroupValue, len(groups))
	for i := len(groups) - 1; i >= 0; i-- {
		n := uint64(len(groups[i].grouping.values))
		vals[i] = groups[i].grouping.values[gid%n]
		gid /= n
	}
	return vals
}

// groupRadix is the number of cells the group columns can form, and false
// when it does not fit the 32 bits the cell numbers are kept in.
func groupRadix(groups []groupColumn) (uint64, bool) {
	radix := uint64(1)
	for _, g := range groups {
		radix *= uint64(len(g.grouping.values))
		if radix >= 1<<32 {
			return 0, false
		}
	}
	return radix, true
}

// denseCells: group columns that can form at most this many cells (and
// not many more than the table's rows) are totalled in arrays indexed by
// cell number, others in a map.
const denseCells = 1 << 16

// cellTotals sums a count, units and a key per cell number.
type cellTotals struct {
	dense  []cellTotal // by cell number, when the cells are few
	seen   bitset      // the cells added to, when dense
	sparse map[uint64]*cellTotal
}

type cellTotal struct {
	count, units int64
	key          uint32
	// present is 1 for a cell some row formed; 0 for one that only the
	// oblivious paths' non-matching rows added (zeros) to.
	present int64
}

// newCellTotals totals the cells of group columns that can form radix
// cells, over a table of rows rows: in arrays when the cells are few, and
// not many more than the rows (else most entries would stay empty).
func newCellTotals(radix uint64, rows int) *cellTotals {
	if radix <= min(denseCells, 2*uint64(rows)+64) {
		return &cellTotals{dense: make([]cellTotal, radix), seen: newBitset(int(radix))}
	}
	return &cellTotals{sparse: map[uint64]*cellTotal{}}
}

func (t *cellTotals) add(gid uint64, count, units int64, key uint32) {
	t.addIf(gid, count, units, key, 1)
}

// addIf adds to cell gid, which is released when present is 1 for some
// add: a cell only ever added zeros is not one the rows form.
func (t *cellTotals) addIf(gid uint64, count, units int64, key uint32, present int64) {
	var tot *cellTotal
	if t.sparse == nil {
		tot = &t.dense[gid]
		t.seen[gid>>6] |= uint64(present) << (gid & 63)
	} else if tot = t.sparse[gid]; tot == nil {
		tot = &cellTotal{}
		t.sparse[gid] = tot
	}
	tot.count += count
	tot.units += units
	tot.key += key
	tot.present |= present
}

// cells are the cells added to, in ascending cell number (the compiled
// SQL's order), each finished with its units and key by finish.
func (t *cellTotals) cells(groups []groupColumn, finish func(c ir.Cell, units int64, key uint32) ir.Cell) []ir.Cell {
	var cells []ir.Cell
	emit := func(gid uint64, tot *cellTotal) {
		c := ir.Cell{InDomain: true, Count: tot.count, Group: groupValues(groups, gid)}
		cells = append(cells, finish(c, tot.units, tot.key))
	}
	if t.sparse == nil {
		t.seen.each(func(gid int) { emit(uint64(gid), &t.dense[gid]) })
		return cells
	}
	gids := make([]uint64, 0, len(t.sparse))
	for gid := range t.sparse {
		gids = append(gids, gid)
	}
	slices.Sort(gids)
	for _, gid := range gids {
		if tot := t.sparse[gid]; tot.present == 1 {
			emit(gid, tot)
		}
	}
	return cells
}

// unitCell is one of a unit's cells and its matching rows in it.
type unitCell struct {
	gid  uint64
	rows int64
}

// unitCells gathers one unit's cells, its storage reused unit to unit. A
// unit's cells are looked up one by one while few, through a map past
// manyCells (a unit in thousands of cells would otherwise cost the square).
type unitCells struct {
	cells []unitCell
	index map[uint64]int
}

const manyCells = 32

// reset starts the next unit.
func (u *unitCells) reset() {
	u.cells = u.cells[:0]
	if u.index != nil {
		clear(u.index)
	}
}

// find returns the index of cell gid, adding it when new (new is true).
func (u *unitCells) find(gid uint64) (i int, added bool) {
	if len(u.cells) > manyCells {
		if i, ok := u.index[gid]; ok {
			return i, false
		}
	} else if i := slices.IndexFunc(u.cells, func(c unitCell) bool { return c.gid == gid }); i >= 0 {
		return i, false
	}
	u.cells = append(u.cells, unitCell{gid: gid})
	i = len(u.cells) - 1
	switch {
	case len(u.cells) == manyCells+1: // from now on by map
		if u.index == nil {
			u.index = map[uint64]int{}
		}
		for j, c := range u.cells {
			u.index[c.gid] = j
		}
	case len(u.cells) > manyCells+1:
		u.index[gid] = i
	}
	return i, true
}

// eachUnitCell calls add with every (unit code, cell) pair among the
// matching rows and the unit's rows in that cell, one unit after another,
// and null with the cell of each matching row without a unit. The rows are
// in the unit's order, so the matching rows are read once, a unit ending
// where its run does: the work is the matching rows, however many the
// table holds.
func eachUnitCell(matched bitset, unit *snapColumn, groups []groupColumn, add func(u uint32, gid uint64, rows int64), null func(gid uint64)) {
	n := uint32(len(unit.values))
	if n == 0 {
		return
	}
	var cells unitCells
	u, end := uint32(0), int(unit.prefix[1])
	withoutUnit := int(unit.prefix[unit.firstNonNull()]) // the NULL unit's rows come first
	flush := func() {
		for _, c := range cells.cells {
			add(u, c.gid, c.rows)
		}
		cells.reset()
	}
	matched.each(func(r int) {
		if r >= end {
			flush()
			for r >= end {
				u++
				end = int(unit.prefix[u+1])
			}
		}
		gid := groupID(groups, r)
		if r < withoutUnit {
			null(gid)
			return
		}
		i, _ := cells.find(gid)
		cells.cells[i].rows++
	})
	flush()
}

// codeCounts is how many rows of matched hold each value code of c and,
// when keys (by row) are given, the sum of those rows' keys: a GROUP BY on
// one column, of counts alone or on a table keyed by its unit (not under
// Oblivious: the work is the matching rows). Every row matching, the counts
// are the dictionary's; otherwise one pass over the matching rows adds to
// its code's totals, with no cell number to compute (the cells are totalled
// from the codes' after).
func codeCounts(matched bitset, c *snapColumn, keys []uint32) (counts []int64, keySums []uint32) {
	counts = make([]int64, len(c.values))
	if keys == nil && matched.count() == int64(c.rows()) {
		for code := range counts {
			counts[code] = int64(c.prefix[code+1] - c.prefix[code])
		}
		return counts, nil
	}
	if keys != nil {
		keySums = make([]uint32, len(c.values))
	}
	switch {
	case c.codes8 != nil:
		countCodes(matched, c.codes8, counts, keys, keySums)
	case c.codes16 != nil:
		countCodes(matched, c.codes16, counts, keys, keySums)
	default:
		countCodes(matched, c.codes32, counts, keys, keySums)
	}
	return counts, keySums
}

func countCodes[C uint8 | uint16 | uint32](matched bitset, codes []C, counts []int64, keys, keySums []uint32) {
	for wi, w := range matched {
		base := wi << 6
		for ; w != 0; w &= w - 1 {
			r := base | bits.TrailingZeros64(w)
			counts[codes[r]]++
			if keys != nil {
				keySums[codes[r]] += keys[r]
			}
		}
	}
}
