package snapshot

import (
	"math"
	"slices"
	"strings"

	"countwall/ir"
	"countwall/planner/plan"
)

// Sums: a query with SUM or AVG in one pass over the rows, the same
// figures the sums SQL returns (plan.SumsLayout). Under needs.Oblivious the
// pass visits every row and adds each one's figures masked by whether it
// matches, with the same operations whatever a row holds, so that its work
// follows the table's size and dictionaries, never which rows match or what
// they sum to.

// sumColumn is one summed column's per-value figures: its values as the
// sums read them, indexed by dictionary code.
type sumColumn struct {
	col     *snapColumn
	integer bool
	num     []int64   // 1 where the value is a number of the column's type
	ints    []int64   // integer columns: the value (0 where num is 0)
	floats  []float64 // the value as a double precision (0 where num is 0)
	clamped []float64 // the value clamped to the bounds (0 where num is 0)
}

func newSumColumn(col *snapColumn, cat *ir.Column) sumColumn {
	n := len(col.values)
	s := sumColumn{col: col, integer: cat.Type == ir.TypeInt,
		num: make([]int64, n), ints: make([]int64, n), floats: make([]float64, n), clamped: make([]float64, n)}
	for code, v := range col.values {
		switch {
		case v.class == classInt:
			s.num[code], s.ints[code], s.floats[code] = 1, v.i, float64(v.i)
		case v.class == classReal && !s.integer:
			s.num[code], s.floats[code] = 1, v.f
		default:
			continue
		}
		if cat.Bounds != nil {
			s.clamped[code] = cat.Bounds.Clamp(s.floats[code])
		}
	}
	return s
}

// sumCell is a cell's running figures.
type sumCell struct {
	count int64
	n     []int64
	ints  []plan.Int128
	float []float64
	clamp []float64
	contr [][]float64
	units int64
	key   uint32
}

func newSumCell(k int) *sumCell {
	return &sumCell{n: make([]int64, k), ints: make([]plan.Int128, k), float: make([]float64, k),
		clamp: make([]float64, k), contr: make([][]float64, k)}
}

// add adds row r's figures, masked by m (1 to add, 0 to add nothing).
func (c *sumCell) add(cols []sumColumn, r int, m int64) {
	c.count += m
	mask := uint64(-m) // all ones or zero
	for k := range cols {
		code := cols[k].col.code(r)
		c.n[k] += m & cols[k].num[code]
		c.ints[k].Add(int64(uint64(cols[k].ints[code]) & mask))
		c.float[k] += math.Float64frombits(math.Float64bits(cols[k].floats[code]) & mask)
		c.clamp[k] += math.Float64frombits(math.Float64bits(cols[k].clamped[code]) & mask)
	}
}

// sumInputs are what a query with sums reads: its group columns and their
// radix, and its summed columns; false when the snapshot declines it.
func (snap *Table) sumInputs(t *ir.Table, q *ir.Query) ([]groupColumn, uint64, []sumColumn, bool) {
	groups, ok := snap.groupColumns(t, q)
	if !ok {
		return nil, 0, nil, false
	}
	radix, ok := groupRadix(groups)
	if !ok {
		return nil, 0, nil, false
	}
	var cols []sumColumn
	for _, name := range q.SumColumns() {
		col := snap.columns[strings.ToLower(name)]
		if col == nil || col.affinity == affinityBlob {
			return nil, 0, nil, false // no affinity: a column may hold any class
		}
		cols = append(cols, newSumColumn(col, t.Columns[name]))
	}
	return groups, radix, cols, true
}

// answerSums computes a query with sums from the snapshot, or declines it
// (ok false) for SQLite to answer.
// bounds and rank are Prepare's, for sums bounded per unit.
func (snap *Table) answerSums(t *ir.Table, q *ir.Query, needs ir.Needs, secret []byte, shape *plan.Shape, bounds ir.Bounds, rank bool) (*ir.Result, bool, error) {
	needs, keyed := plan.UnitKeyedSums(t, q, needs)
	if needs.Bound {
		return snap.answerBoundedSums(t, q, needs, secret, shape, bounds, rank)
	}
	groups, radix, cols, ok := snap.sumInputs(t, q)
	if !ok {
		return nil, false, nil
	}
	var unit *snapColumn
	var keys []uint32
	if plan.PerUnitSums(needs) {
		if unit = snap.columns[strings.ToLower(t.PrivacyUnit)]; unit == nil || !unit.countsUnits(needs.Oblivious) {
			return nil, false, nil
		}
		if needs.Key {
			keys = snap.unitKeys(unit, secret)
		}
	}
	ev := newSnapEval(snap, t, needs)
	defer ev.release()
	matched, evaluated := ev.matched(q)
	if !evaluated {
		return nil, false, nil
	}
	p := sumPass{cols: cols, groups: groups, cells: map[uint64]*sumCell{}, topK: needs.TopContributions, keys: keys}
	if radix <= denseCells {
		p.dense = make([]*sumCell, radix)
	}
	p.run(snap.rows, matched, needs.Oblivious, unit)
	res, ok, err := p.result(snap, shape, q, needs)
	if keyed && res != nil {
		plan.UnitsFromRows(res.Cells)
	}
	return res, ok, err
}

// sumPass is one pass's cells, by cell number.
type sumPass struct {
	cols   []sumColumn
	groups []groupColumn
	dense  []*sumCell // when the cells are few
	cells  map[uint64]*sumCell
	order  []uint64 // the cells in the order first formed
	topK   int
	keys   []uint32 // the unit column's record keys by value code, when keyed
}

func (p *sumPass) cell(gid uint64) *sumCell {
	var c *sumCell
	if p.dense != nil {
		c = p.dense[gid]
	} else {
		c = p.cells[gid]
	}
	if c == nil {
		c = newSumCell(len(p.cols))
		if p.dense != nil {
			p.dense[gid] = c
		} else {
			p.cells[gid] = c
		}
		p.order = append(p.order, gid)
	}
	return c
}

// run adds the matching rows (every row, masked, when oblivious) and, when
// unit is set, each unit's clamped total per cell: the rows are in the
// unit's order, each unit's rows one run.
func (p *sumPass) run(rows int, matched bitset, oblivious bool, unit *snapColumn) {
	var units unitTotals
	visit := func(r int, m int64) {
		gid := groupID(p.groups, r)
		p.cell(gid).add(p.cols, r, m)
		if unit != nil {
			units.add(p, unit, r, gid, m)
		}
	}
	if oblivious {
		for r := range rows {
			visit(r, int64(matched[r>>6]>>(uint(r)&63)&1))
		}
	} else {
		matched.each(func(r int) { visit(r, 1) })
	}
	if unit != nil {
		units.flush(p)
	}
}

// unitTotals are one unit's clamped totals per cell while its run is read.
type unitTotals struct {
	code    uint32
	started bool
	null    bool
	cells   map[uint64][]float64 // per summed column; present once a row matched
}

func (u *unitTotals) add(p *sumPass, unit *snapColumn, r int, gid uint64, m int64) {
	code := unit.code(r)
	if !u.started || code != u.code {
		u.flush(p)
		u.code, u.started, u.null = code, true, unit.values[code].class == classNull
		u.cells = map[uint64][]float64{}
	}
	if m == 0 || u.null {
		return
	}
	t, ok := u.cells[gid]
	if !ok {
		t = make([]float64, len(p.cols))
		u.cells[gid] = t
	}
	for k := range p.cols {
		t[k] += p.cols[k].clamped[p.cols[k].col.code(r)]
	}
}

func (u *unitTotals) flush(p *sumPass) {
	for gid, t := range u.cells {
		c := p.cell(gid)
		c.units++
		if p.keys != nil {
			c.key += p.keys[u.code]
		}
		for k, v := range t {
			c.contr[k] = append(c.contr[k], v)
		}
	}
	u.cells = nil
}

// result lays out the pass's cells (those some matching row formed) as
// the snapshot's counts are laid out.
func (p *sumPass) result(snap *Table, shape *plan.Shape, q *ir.Query, needs ir.Needs) (*ir.Result, bool, error) {
	ids := p.order
	if p.dense != nil {
		ids = ids[:0:0]
		for gid, c := range p.dense {
			if c != nil {
				ids = append(ids, uint64(gid))
			}
		}
	} else {
		slices.Sort(ids)
	}
	cells := make([]ir.Cell, 0, len(ids))
	for _, gid := range ids {
		c := p.cell(gid)
		if c.count == 0 {
			continue // only rows that do not match formed it
		}
		cell := ir.Cell{Group: groupValues(p.groups, gid), Count: c.count, InDomain: true, Sums: make([]ir.SumValue, len(p.cols))}
		if needs.Units || needs.Key {
			cell.Units, cell.Key = c.units, c.key
		}
		for k, col := range p.cols {
			s := &cell.Sums[k]
			s.N = c.n[k]
			if col.integer {
				s.Int = c.ints[k].Big()
			} else {
				s.Float = c.float[k]
			}
			if needs.Clamp || needs.Contributions {
				s.Clamped = c.clamp[k]
			}
			if needs.Contributions {
				s.Contributions = plan.TopContributions(c.contr[k], p.topK)
			}
		}
		cells = append(cells, cell)
	}
	res, err := snap.result(shape, cells, q, needs)
	return res, true, err
}
