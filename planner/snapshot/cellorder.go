package snapshot

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"countwall/planner/plan"
)

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
