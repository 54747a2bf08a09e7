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

// Bounded counts in memory. A count bounded per privacy unit (Needs.Bound)
// is, per cell, the sum over units of min(rows of the unit in the cell, C),
// after each unit has kept at most G of its cells, those of smallest keyed
// hash (CellRank). compileBounded says it in SQL; here the same figures come
// from the snapshot's per-unit row lists: the matching rows are tallied per
// unit in one pass over them, and the keyed hash of every (unit, cell) pair
// of a GROUP BY shape is computed once per snapshot and secret, for the
// whole table, so that neither the first query of a shape nor any later one
// does work that depends on which units have several rows.

// boundedCell is one (unit, cell) pair of a unit's matching rows.
type boundedCell struct {
	gid  uint64 // the cell, as groupCells numbers it
	rows int64  // the unit's matching rows in it
	rank int64  // CellRank of (unit, cell)
}

// answerBounded computes the bounded cells of q, or returns ok false when the
// snapshot declines the query (SQLite answers it instead), for the same
// reasons answer declines one. b and rank are effectiveBounds'.
func (snap *Table) answerBounded(t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte, shape *plan.Shape, b ir.Bounds, rank bool) (*ir.Result, bool, error) {
	unit := snap.columns[strings.ToLower(t.PrivacyUnit)]
	if unit == nil || !unit.groupable() {
		return nil, false, nil
	}
	groups, ok := snap.groupColumns(t, q)
	if !ok {
		return nil, false, nil
	}
	if _, ok := groupRadix(groups); !ok {
		return nil, false, nil
	}
	matched, ok := newSnapEval(snap).matched(q)
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
		var ranks []int64
		if rank {
			ranks = snap.cellRanks(unit, groups, secret)
		}
		cells = snap.boundedGroups(matched, unit, groups, ranks, b.MaxGroupsPerUnit, perRow, needs)
	}
	res, err := snap.result(shape, cells, q, needs)
	return res, true, err
}

// unitScratch is per-query scratch of one counter per unit value, returned
// zeroed to its pool.
var unitScratch sync.Pool // of *[]int64

func takeUnitScratch(n int) *[]int64 {
	if p, ok := unitScratch.Get().(*[]int64); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]int64, n)
	return &s
}

// boundedCount is the one cell of a bounded COUNT: every matching row with a
// unit is tallied to its unit, and each unit adds at most perRow.
func (snap *Table) boundedCount(matched bitset, unit *snapColumn, perRow int64, needs ir.Needs) ir.Cell {
	if snap.byUnit == unit {
		return boundedCountByRuns(matched, unit, perRow, needs)
	}
	scratch := takeUnitScratch(len(unit.values))
	perUnit := *scratch
	var touched []uint32
	for wi, w := range matched {
		w &^= unit.nulls[wi]
		for w != 0 {
			r := wi<<6 | bits.TrailingZeros64(w)
			w &= w - 1
			u := unit.code(r)
			if perUnit[u] == 0 {
				touched = append(touched, u)
			}
			perUnit[u]++
		}
	}
	c := ir.Cell{InDomain: true}
	for _, u := range touched {
		c.Count += min(perUnit[u], perRow)
		perUnit[u] = 0
	}
	unitScratch.Put(scratch)
	if needs.Units {
		c.Units = int64(len(touched))
	}
	return c
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
	scratch := takeUnitScratch(len(matched) + 1)
	before := *scratch // before[w]: matching rows in the words ahead of word w
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
	clear(before)
	unitScratch.Put(scratch)
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
// together through the unit column's row lists; a unit in more than maxCells
// cells keeps those of smallest (rank, cell) when ranks are given.
func (snap *Table) boundedGroups(matched bitset, unit *snapColumn, groups []groupColumn, ranks []int64, maxCells, perRow int64, needs ir.Needs) []ir.Cell {
	type total struct{ count, units int64 }
	totals := map[uint64]*total{}
	var mine []boundedCell
	first := unit.firstNonNull()
	for u := first; u < uint32(len(unit.values)); u++ {
		mine = mine[:0]
		for _, r32 := range unit.rowsByCode[unit.prefix[u]:unit.prefix[u+1]] {
			r := int(r32)
			if !matched.has(r) {
				continue
			}
			gid := groupID(groups, r)
			i := slices.IndexFunc(mine, func(c boundedCell) bool { return c.gid == gid })
			if i < 0 {
				var rk int64
				if ranks != nil {
					rk = ranks[r]
				}
				mine = append(mine, boundedCell{gid: gid, rank: rk})
				i = len(mine) - 1
			}
			mine[i].rows++
		}
		if ranks != nil && int64(len(mine)) > maxCells {
			slices.SortFunc(mine, func(a, b boundedCell) int {
				return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.gid, b.gid))
			})
			mine = mine[:maxCells]
		}
		for _, c := range mine {
			tot := totals[c.gid]
			if tot == nil {
				tot = &total{}
				totals[c.gid] = tot
			}
			tot.count += min(c.rows, perRow)
			tot.units++
		}
	}
	gids := make([]uint64, 0, len(totals))
	for gid := range totals {
		gids = append(gids, gid)
	}
	slices.Sort(gids)
	cells := make([]ir.Cell, len(gids))
	for i, gid := range gids {
		c := ir.Cell{InDomain: true, Count: totals[gid].count, Group: groupValues(groups, gid)}
		if needs.Units {
			c.Units = totals[gid].units
		}
		cells[i] = c
	}
	return cells
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

// rankKey names the cell ranks of one GROUP BY shape under one secret.
type rankKey struct {
	unit, columns, secret string
}

// maxRankShapes bounds how many GROUP BY shapes keep their ranks (8 bytes a
// row each); past it the cache is emptied and refilled as shapes recur.
const maxRankShapes = 4

// cellRanks returns, for every row with a unit, the CellRank of its (unit,
// cell) pair under secret, as the compiled SQL passes them to
// countwall_cell_rank: the unit as stored, each group as the text its
// column's type reads it as (NULL apart). They are computed once per shape,
// for the whole table.
func (snap *Table) cellRanks(unit *snapColumn, groups []groupColumn, secret []byte) []int64 {
	var names strings.Builder
	for _, g := range groups {
		// One grouping per column and catalog type reading it.
		fmt.Fprintf(&names, "%s:%p\x00", g.name, g.grouping)
	}
	key := rankKey{unit: unit.name, columns: names.String(), secret: string(secret)}
	snap.ranksMu.Lock()
	defer snap.ranksMu.Unlock()
	if r, ok := snap.ranks[key]; ok {
		return r
	}
	ranks := make([]int64, snap.rows)
	vals := make([]any, len(groups))
	type pair struct {
		gid  uint64
		rank int64
	}
	var seen []pair
	for u := unit.firstNonNull(); u < uint32(len(unit.values)); u++ {
		uv := unit.values[u].any()
		seen = seen[:0]
		for _, r32 := range unit.rowsByCode[unit.prefix[u]:unit.prefix[u+1]] {
			r := int(r32)
			gid := groupID(groups, r)
			if i := slices.IndexFunc(seen, func(p pair) bool { return p.gid == gid }); i >= 0 {
				ranks[r] = seen[i].rank
				continue
			}
			for i, g := range groups {
				vals[i] = rankValue(g, r)
			}
			ranks[r] = plan.CellRank(secret, uv, vals...)
			seen = append(seen, pair{gid, ranks[r]})
		}
	}
	if snap.ranks == nil || len(snap.ranks) >= maxRankShapes {
		snap.ranks = map[rankKey][]int64{}
	}
	snap.ranks[key] = ranks
	return ranks
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
