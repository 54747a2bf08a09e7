package snapshot

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"countwall/ir"
	"countwall/planner/plan"
)

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

// cellOrder is, for one GROUP BY shape under one secret, each row's cell's
// place among its unit's cells in the order of (CellRank of the unit and
// cell, cell number): under G, a unit keeps the first G of its matching
// cells in this order, as the compiled SQL keeps those of smallest rank.
type cellOrder struct {
	place    []uint32 // by row; 0 for rows without a unit
	gid      []uint32 // by row, its cell number (groupRadix keeps it in 32 bits)
	maxCells int      // the most cells any unit has

	// spare holds keepFirst's scratch between queries, all zero, so that
	// no query pays for the most cells one unit has (a sync.Pool would
	// drop it at every garbage collection).
	spareMu sync.Mutex
	spare   []*keepScratch
}

// keepScratch is one query's marks and counts by place.
type keepScratch struct {
	marks bitset
	rows  []int64
	gids  []uint32
}

func (o *cellOrder) takeScratch() *keepScratch {
	o.spareMu.Lock()
	defer o.spareMu.Unlock()
	if n := len(o.spare); n > 0 {
		k := o.spare[n-1]
		o.spare = o.spare[:n-1]
		return k
	}
	return &keepScratch{marks: newBitset(o.maxCells), rows: make([]int64, o.maxCells), gids: make([]uint32, o.maxCells)}
}

// putScratch takes back a scratch its user has cleared.
func (o *cellOrder) putScratch(k *keepScratch) {
	o.spareMu.Lock()
	o.spare = append(o.spare, k)
	o.spareMu.Unlock()
}

// keepFirst adds to totals, for each unit, its matching rows in each of the
// first maxCells of its matching cells (clipped at perRow), and one unit.
// A unit's cells are marked by place in a bit set, so that its first cells
// are the lowest set bits: the work is the matching rows and each unit's
// cells' words, without a sort. The rows are in the unit's order, so the
// matching rows are read in one pass, a unit ending where its run does.
func (o *cellOrder) keepFirst(matched bitset, unit *snapColumn, maxCells, perRow int64, totals *cellTotals) {
	scratch := o.takeScratch()
	defer o.putScratch(scratch) // flush leaves it all zero
	marks, rows, gids := scratch.marks, scratch.rows, scratch.gids
	last := -1 // the highest word of marks set
	mark := func(r int) {
		p := o.place[r]
		if rows[p] == 0 {
			marks.set(int(p))
			gids[p] = o.gid[r]
			last = max(last, int(p>>6))
		}
		rows[p]++
	}
	// flush adds the marked cells of one unit and clears them.
	flush := func() {
		left := maxCells
		for w := 0; w <= last; w++ {
			for m := marks[w]; m != 0; m &= m - 1 {
				p := w<<6 | bits.TrailingZeros64(m)
				if left > 0 {
					totals.add(uint64(gids[p]), min(rows[p], perRow), 1, 0)
					left--
				}
				rows[p] = 0
			}
			marks[w] = 0
		}
		last = -1
	}
	first := unit.firstNonNull()
	if first >= uint32(len(unit.values)) {
		return // every unit NULL
	}
	u, start, end := first, int(unit.prefix[first]), int(unit.prefix[first+1])
	matched.each(func(r int) {
		if r < start {
			return // a row without a unit
		}
		if r >= end {
			flush()
			for r >= end {
				u++
				end = int(unit.prefix[u+1])
			}
		}
		mark(r)
	})
	flush()
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

// boundedFinish gives a bounded cell its units when needs asks for them.
func boundedFinish(needs ir.Needs) func(ir.Cell, int64, uint32) ir.Cell {
	return func(c ir.Cell, units int64, _ uint32) ir.Cell {
		if needs.Units {
			c.Units = units
		}
		return c
	}
}

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

// orderKey names the cell order of one GROUP BY shape under one secret.
type orderKey struct {
	unit, columns, secret string
}

// maxOrderShapes bounds how many GROUP BY shapes keep their cell order (8
// bytes a row each); past it the least recently asked is dropped.
const maxOrderShapes = 4

// keptOrder is one shape's cell order in the snapshot's cache.
type keptOrder struct {
	key   orderKey
	order *cellOrder
}

// cellOrder returns the cell order of a GROUP BY shape under secret, from
// the CellRank of every (unit, cell) pair as the compiled SQL passes them to
// countwall_cell_rank: the unit as stored, each group as the text its
// column's type reads it as (NULL apart). It is computed once per shape,
// for the whole table, so that no query's work depends on which units have
// several cells.
func (snap *Table) cellOrder(unit *snapColumn, groups []groupColumn, secret []byte) *cellOrder {
	var names strings.Builder
	for _, g := range groups {
		// One grouping per column and catalog type reading it.
		fmt.Fprintf(&names, "%s:%p\x00", g.name, g.grouping)
	}
	key := orderKey{unit: unit.name, columns: names.String(), secret: string(secret)}
	snap.ordersMu.Lock()
	defer snap.ordersMu.Unlock()
	if i := slices.IndexFunc(snap.orders, func(k keptOrder) bool { return k.key == key }); i >= 0 {
		kept := snap.orders[i]
		snap.orders = append(slices.Delete(snap.orders, i, i+1), kept) // now the most recent
		return kept.order
	}
	o := &cellOrder{place: make([]uint32, snap.rows), gid: make([]uint32, snap.rows), maxCells: 1}
	vals := make([]any, len(groups))
	var cells unitCells
	var ranks []int64 // by index in cells.cells
	var byRank []int  // indexes into cells.cells, in (rank, cell) order
	place := []uint32{}
	for u := unit.firstNonNull(); u < uint32(len(unit.values)); u++ {
		uv := unit.values[u].any()
		lo, hi := int(unit.prefix[u]), int(unit.prefix[u+1])
		cells.reset()
		ranks = ranks[:0]
		for r := lo; r < hi; r++ {
			gid := groupID(groups, r)
			o.gid[r] = uint32(gid)
			// The keyed hash is paid for every row, not once per cell: it
			// is most of the build's time, which then follows the table's
			// rows rather than how a person's rows spread over cells.
			for i, g := range groups {
				vals[i] = rankValue(g, r)
			}
			rank := plan.CellRank(secret, uv, vals...)
			if _, added := cells.find(gid); added {
				ranks = append(ranks, rank)
			}
		}
		byRank = byRank[:0]
		for i := range cells.cells {
			byRank = append(byRank, i)
		}
		slices.SortFunc(byRank, func(a, b int) int {
			return cmp.Or(cmp.Compare(ranks[a], ranks[b]), cmp.Compare(cells.cells[a].gid, cells.cells[b].gid))
		})
		place = slices.Grow(place[:0], len(byRank))[:len(byRank)]
		for p, i := range byRank {
			place[i] = uint32(p)
		}
		for r := lo; r < hi; r++ {
			i, _ := cells.find(uint64(o.gid[r]))
			o.place[r] = place[i]
		}
		o.maxCells = max(o.maxCells, len(byRank))
	}
	if len(snap.orders) >= maxOrderShapes {
		snap.orders = slices.Delete(snap.orders, 0, 1) // the least recent goes
	}
	snap.orders = append(snap.orders, keptOrder{key, o})
	return o
}

// rankValue is row r's group value as the compiled SQL passes it to
// countwall_cell_rank: a text column's group text, or a number column's
// number as stored (an integer and an equal real of one group hash alike,
// see appendRankValue); NULL for the NULL group.
func rankValue(g groupColumn, r int) any {
	v := g.values[g.code(r)]
	if g.grouping.text {
		s, ok := plan.GroupText(v.any())
		if !ok {
			return nil
		}
		return s
	}
	if !isNumber(v) {
		return nil
	}
	return v.any()
}
