package snapshot

import (
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"countwall/ir"
	"countwall/planner/plan"
)

// Sums bounded per privacy unit (Needs.Bound), in memory, with the rule of
// plan's sums_bounded.go: rows without a unit count for nothing, a unit in
// more than G cells keeps the G first in the cell order (CellRank), and in
// each cell a unit adds at most C rows, at most C values per column, and its
// clamped total scaled by C/n when it has n > C values.
//
// The pass is data-oblivious whatever the mechanism: it visits every row,
// adding each one's figures masked by whether it matches, into its unit's
// accumulators for the row's place in the unit's cell order; at the end of
// each unit's run it visits as many places as the unit has rows (not cells),
// keeping or dropping each one with masks. Its work is then the table's rows
// and units, whatever the WHERE holds on, which values are stored, how a
// person's rows spread over cells or whether they pass C or G.
//
// The figures are SQLite's to the bit: a unit's total in a cell is summed in
// the order of its rows, as SQLite's TOTAL sums it (Kahan-Babuska-Neumaier),
// and a cell adds its units' parts in the unit's order, as the fold adds
// the rows of the bounded sums SQL, ordered by cell and unit.

// answerBoundedSums computes the bounded cells of a query with sums, or
// declines it (ok false) for SQLite to answer. b and rank are Prepare's.
func (snap *Table) answerBoundedSums(t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte, shape *plan.Shape, b ir.Bounds, rank bool) (*ir.Result, bool, error) {
	unit := snap.columns[strings.ToLower(t.PrivacyUnit)]
	if unit == nil || !unit.countsUnits(true) {
		return nil, false, nil
	}
	groups, radix, cols, ok := snap.sumInputs(t, q)
	if !ok {
		return nil, false, nil
	}
	ev := newSnapEval(snap, t, needs)
	defer ev.release()
	matched, ok := ev.matched(q)
	if !ok {
		return nil, false, nil
	}
	cells, _ := snap.boundedSumCells(matched, unit, groups, radix, cols, secret, b, rank)
	res, err := snap.result(shape, cells, q, needs)
	return res, true, err
}

// boundedSumCells is the pass over the matching rows and the cells it
// keeps, with its work (rows and places visited) for the tests.
func (snap *Table) boundedSumCells(matched bitset, unit *snapColumn, groups []groupColumn, radix uint64, cols []sumColumn, secret []byte, b ir.Bounds, rank bool) ([]ir.Cell, int) {
	var order *cellOrder
	if len(groups) > 0 {
		order = snap.cellOrder(unit, groups, secret)
	}
	maxCells := int64(math.MaxInt64)
	if rank {
		maxCells = b.MaxGroupsPerUnit
	}
	p := boundedSumPass{cols: cols, unit: unit, order: order, perRow: b.MaxRowsPerUnit, maxCells: maxCells}
	totals := newSumTotals(radix, snap.rows, len(cols))
	snap.sumScratch.use(snap.longestRun(unit, order != nil), len(cols), func(s *sumScratch) {
		p.run(matched, s, totals)
	})
	return totals.cells(groups, cols), p.work
}

// longestRun is the most places a unit's run needs: its rows when grouped
// (a unit has at most as many cells as rows), one cell otherwise.
func (snap *Table) longestRun(unit *snapColumn, grouped bool) int {
	if !grouped {
		return 1
	}
	most := 1
	for u := range len(unit.values) {
		most = max(most, int(unit.prefix[u+1]-unit.prefix[u]))
	}
	return most
}

// boundedSumPass is one query's pass over the rows.
type boundedSumPass struct {
	cols     []sumColumn
	unit     *snapColumn
	order    *cellOrder // nil without GROUP BY: one cell, place 0
	perRow   int64      // C
	maxCells int64      // G, or no limit when the cells are not chosen
	work     int        // rows and places visited, for the tests
}

// run adds every row into its unit's place and flushes each unit's places
// into totals at the end of its run. The NULL unit's rows (the first run)
// are visited too, masked out.
func (p *boundedSumPass) run(matched bitset, s *sumScratch, totals *sumTotals) {
	k := len(p.cols)
	for u := range uint32(len(p.unit.values)) {
		lo, hi := int(p.unit.prefix[u]), int(p.unit.prefix[u+1])
		for r := lo; r < hi; r++ {
			m := bit(matched, r) &^ bit(p.unit.nulls, r)
			place, gid := 0, uint32(0)
			if p.order != nil {
				place, gid = int(p.order.place[r]), p.order.gid[r]
			}
			s.rows[place] += m
			s.gids[place] = gid
			mask := uint64(-m)
			for c := range p.cols {
				col := &p.cols[c]
				code := col.col.code(r)
				i := place*k + c
				s.n[i] += m & col.num[code]
				if col.integer {
					s.ints[i].Add(int64(uint64(col.ints[code]) & mask))
				} else {
					s.float[i].add(maskFloat(col.floats[code], mask))
				}
				s.clamp[i].add(maskFloat(col.clamped[code], mask))
			}
		}
		places := 1
		if p.order != nil {
			places = hi - lo
		}
		p.flush(s, places, totals)
		p.work += hi - lo + places
	}
}

// flush adds one unit's first maxCells places with a matching row, each
// bounded, to totals, and clears its places.
func (p *boundedSumPass) flush(s *sumScratch, places int, totals *sumTotals) {
	k := len(p.cols)
	left := p.maxCells
	for place := range places {
		keep := oneIf(s.rows[place]) * oneIf(left)
		left -= keep
		mask := uint64(-keep)
		t := totals.cell(uint64(s.gids[place]))
		t.count += min(s.rows[place], p.perRow) * keep
		t.units += keep
		t.present |= keep
		for c := range k {
			i := place*k + c
			n := s.n[i]
			over := int64(uint64(p.perRow-n) >> 63) // 1 when n > C
			clamped := s.clamp[i].total()
			scaled := clamped * (float64(p.perRow) / float64(max(n, 1)))
			clamped = math.Float64frombits(math.Float64bits(clamped) ^ (math.Float64bits(clamped)^math.Float64bits(scaled))&uint64(-over))
			t.sums[c].n += min(n, p.perRow) * keep
			addInt128(&t.sums[c].ints, s.ints[i], mask)
			t.sums[c].float += maskFloat(s.float[i].total(), mask)
			t.sums[c].clamp += maskFloat(clamped, mask)
			s.n[i], s.ints[i], s.float[i], s.clamp[i] = 0, plan.Int128{}, kbn{}, kbn{}
		}
		s.rows[place], s.gids[place] = 0, 0
	}
}

// maskFloat is x where mask is all ones and +0 where it is zero.
func maskFloat(x float64, mask uint64) float64 {
	return math.Float64frombits(math.Float64bits(x) & mask)
}

// kbn is a running sum as SQLite's SUM and TOTAL keep one of reals: the
// Kahan-Babuska-Neumaier sum and its error term. Adding +0 changes neither.
type kbn struct{ sum, err float64 }

// add is SQLite's kahanBabuskaNeumaierStep, with the choice of which term
// is the larger made by arithmetic on the magnitudes' bits (their order as
// integers is their order as numbers) rather than by a branch.
func (a *kbn) add(r float64) {
	s := a.sum
	t := s + r
	sBig := (math.Float64bits(r)&^signBit - math.Float64bits(s)&^signBit) >> 63 // |s| > |r|
	whenS, whenR := math.Float64bits((s-t)+r), math.Float64bits((r-t)+s)
	a.err += math.Float64frombits(whenR ^ (whenS^whenR)&uint64(-int64(sBig)))
	a.sum = t
}

const signBit = 1 << 63

// total is SQLite's result: the sum plus its error term, unless that term
// has overflowed to an infinity or NaN.
func (a kbn) total() float64 {
	finite := (math.Float64bits(a.err)>>52&0x7ff - 0x7ff) >> 63 // exponent below all ones
	return a.sum + maskFloat(a.err, uint64(-int64(finite)))
}

// sumScratch is one query's accumulators by place (and place*columns +
// column), all zero between units and between queries.
type sumScratch struct {
	rows  []int64
	gids  []uint32
	n     []int64
	ints  []plan.Int128
	float []kbn
	clamp []kbn
}

// sumScratches keeps scratch between queries, so that no query allocates
// arrays as long as the longest person's run (a sync.Pool would drop them
// at every garbage collection).
type sumScratches struct {
	mu    sync.Mutex
	spare []*sumScratch
}

// use runs f with zeroed scratch for places places of columns columns; f
// leaves it zero.
func (ss *sumScratches) use(places, columns int, f func(*sumScratch)) {
	places = max(places, 1)
	size := places * columns
	ss.mu.Lock()
	var s *sumScratch
	for i, c := range ss.spare {
		if len(c.n) >= size && len(c.rows) >= places {
			s = c
			ss.spare = append(ss.spare[:i], ss.spare[i+1:]...)
			break
		}
	}
	ss.mu.Unlock()
	if s == nil {
		s = &sumScratch{rows: make([]int64, places), gids: make([]uint32, places), n: make([]int64, size),
			ints: make([]plan.Int128, size), float: make([]kbn, size), clamp: make([]kbn, size)}
	}
	f(s)
	ss.mu.Lock()
	if len(ss.spare) < 4 {
		ss.spare = append(ss.spare, s)
	}
	ss.mu.Unlock()
}

// addInt128 adds b to a where mask is all ones, the same work either way.
func addInt128(a *plan.Int128, b plan.Int128, mask uint64) {
	var carry uint64
	a.Lo, carry = bits.Add64(a.Lo, b.Lo&mask, 0)
	a.Hi += int64(uint64(b.Hi)&mask) + int64(carry)
}

// sumTotals are the bounded cells' running figures by cell number.
type sumTotals struct {
	dense  []sumTotal // by cell number, when the cells are few
	sparse map[uint64]*sumTotal
	width  int // summed columns
}

type sumTotal struct {
	count, units int64
	present      int64 // 1 once a unit kept the cell
	sums         []sumFigures
}

type sumFigures struct {
	n     int64
	ints  plan.Int128
	float float64
	clamp float64
}

// newSumTotals totals the cells of group columns that can form radix cells,
// over a table of rows rows, as newCellTotals does.
func newSumTotals(radix uint64, rows, columns int) *sumTotals {
	t := &sumTotals{width: columns}
	if radix <= min(denseCells, 2*uint64(rows)+64) {
		t.dense = make([]sumTotal, radix)
		figures := make([]sumFigures, int(radix)*columns)
		for i := range t.dense {
			t.dense[i].sums = figures[i*columns : (i+1)*columns : (i+1)*columns]
		}
		return t
	}
	t.sparse = map[uint64]*sumTotal{}
	return t
}

func (t *sumTotals) cell(gid uint64) *sumTotal {
	if t.sparse == nil {
		return &t.dense[gid]
	}
	c := t.sparse[gid]
	if c == nil {
		c = &sumTotal{sums: make([]sumFigures, t.columns())}
		t.sparse[gid] = c
	}
	return c
}

func (t *sumTotals) columns() int { return t.width }

// cells are the cells some unit kept, in ascending cell number.
func (t *sumTotals) cells(groups []groupColumn, cols []sumColumn) []ir.Cell {
	var cells []ir.Cell
	emit := func(gid uint64, c *sumTotal) {
		if c.present == 0 {
			return
		}
		cell := ir.Cell{Group: groupValues(groups, gid), Count: c.count, Units: c.units, InDomain: true, Sums: make([]ir.SumValue, len(cols))}
		for k, col := range cols {
			s, f := &cell.Sums[k], c.sums[k]
			s.N, s.Clamped = f.n, f.clamp
			if col.integer {
				s.Int = f.ints.Big()
			} else {
				s.Float = f.float
			}
		}
		cells = append(cells, cell)
	}
	if t.sparse == nil {
		for gid := range t.dense {
			emit(uint64(gid), &t.dense[gid])
		}
		return cells
	}
	gids := make([]uint64, 0, len(t.sparse))
	for gid := range t.sparse {
		gids = append(gids, gid)
	}
	slices.Sort(gids)
	for _, gid := range gids {
		emit(gid, t.sparse[gid])
	}
	return cells
}
