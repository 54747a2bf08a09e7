package snapshot

import (
	"encoding/binary"

	"countwall/ir"
)

// Data-oblivious evaluation, for the mechanisms that claim a privacy loss
// (ir.Needs.Oblivious). The fast ways of leaf.go choose between
// listed rows, row sets, cuts and masked rows by how many rows hold each
// value, and a conjunction puts its most selective condition first: the
// work, and so the time, of a statement then moves with how often a value
// occurs, and one person can move it. Here every leaf condition reads the
// code of every row, in one branch-free pass whose kernel is chosen by the
// kind of condition, and AND, OR and NOT combine whole row sets: the work is
// the same for every table with the same rows, columns and dictionary
// widths, whatever the rows hold. What is left (the dictionary's size, which
// one person changes by at most one value; LIKE's match of each distinct
// value) is measured in docs/timing.md.

// obliviousPred evaluates p over every row with three-valued logic: t holds
// the rows where p is true, f (when wantF) those where it is false. Which
// sets are computed follows the statement's shape: a WHERE's AND and OR
// need only their sides' true rows, a NOT or a negated leaf the false ones.
func (e *snapEval) obliviousPred(p ir.Pred, wantF bool) (t, f bitset, ok bool) {
	switch p := p.(type) {
	case *ir.And:
		if !wantF {
			return e.obliviousConjunction(p)
		}
		lt, lf, rt, rf, ok := e.obliviousSides(p.Left, p.Right, wantF)
		if !ok {
			return nil, nil, false
		}
		for i := range lt {
			lt[i] &= rt[i]
			lf[i] |= rf[i]
		}
		return lt, lf, true
	case *ir.Or:
		lt, lf, rt, rf, ok := e.obliviousSides(p.Left, p.Right, wantF)
		if !ok {
			return nil, nil, false
		}
		for i := range lt {
			lt[i] |= rt[i]
		}
		if wantF {
			for i := range lf {
				lf[i] &= rf[i]
			}
		}
		return lt, lf, true
	case *ir.Not:
		it, inf, ok := e.obliviousPred(p.Inner, true)
		return inf, it, ok
	case *ir.IsNull:
		return e.pred(p, e.all, true) // word operations on the NULL set
	case *ir.Compare, *ir.Between, *ir.In, *ir.Like:
		return e.obliviousLeaf(p, wantF)
	case ir.Derived:
		return e.obliviousPred(p.Lower(), wantF)
	}
	return nil, nil, false // MathCompare and anything new run in SQLite
}

// obliviousConjunction is the rows where both sides of p hold. A comparison
// on a domain column is kept in place in the left side's rows: one pass,
// not a set of its own and a pass to combine them.
func (e *snapEval) obliviousConjunction(p *ir.And) (t, f bitset, ok bool) {
	lt, _, ok := e.obliviousPred(p.Left, false)
	if !ok {
		return nil, nil, false
	}
	if e.planeLeafInto(p.Right, lt) {
		return lt, nil, true
	}
	rt, _, ok := e.obliviousPred(p.Right, false)
	if !ok {
		return nil, nil, false
	}
	for i := range lt {
		lt[i] &= rt[i]
	}
	return lt, nil, true
}

// obliviousLeaf evaluates a comparison, BETWEEN, IN or LIKE from the
// column's declared domain, its dictionary's planes or code slices, or a
// scan of every row's code; the false rows when wantF or the leaf is
// negated.
func (e *snapEval) obliviousLeaf(p ir.Pred, wantF bool) (t, f bitset, ok bool) {
	if t, f, ok := e.planeLeaf(p, wantF); ok {
		return t, f, true
	}
	c, set, negate, ok := e.leafSet(p)
	if !ok {
		return nil, nil, false
	}
	if t, ok = e.dictLeaf(c, set, p); !ok {
		t, f = e.scanLeaf(c, set, oneRange(p))
		if negate {
			t, f = f, t
		}
		return t, f, true
	}
	return e.falseRows(c, t, negate, wantF)
}

// falseRows completes a leaf's true rows t (before negation) with its false
// rows, the non-NULL rows t leaves out: one word pass, made when the
// statement needs them.
func (e *snapEval) falseRows(c *snapColumn, t bitset, negate, wantF bool) (bitset, bitset, bool) {
	if !negate && !wantF {
		return t, nil, true
	}
	e.work.planePasses++
	f := e.newDirtySet()
	for i := range f {
		f[i] = e.all[i] &^ t[i] &^ c.nulls[i]
	}
	if negate {
		return f, t, true
	}
	return t, f, true
}

func (e *snapEval) obliviousSides(left, right ir.Pred, wantF bool) (lt, lf, rt, rf bitset, ok bool) {
	if lt, lf, ok = e.obliviousPred(left, wantF); !ok {
		return nil, nil, nil, nil, false
	}
	if rt, rf, ok = e.obliviousPred(right, wantF); !ok {
		return nil, nil, nil, nil, false
	}
	return lt, lf, rt, rf, true
}

// oneRange reports whether a leaf's codes are at most one run, from the kind
// of condition alone: a comparison other than <>, or BETWEEN, holds on one
// run of the sorted dictionary. Whether an IN list's runs happen to merge
// depends on the values stored, so the choice of kernel never rests on it.
func oneRange(p ir.Pred) bool {
	switch p := p.(type) {
	case *ir.Compare:
		return p.Op != "<>" && p.Op != "!="
	case *ir.Between:
		return true
	}
	return false
}

// scanLeaf is the rows whose code is in set (t) and the non-NULL rows whose
// code is not (f), from a pass over every row's code.
func (e *snapEval) scanLeaf(c *snapColumn, set codeSet, single bool) (t, f bitset) {
	e.work.scans++
	t = e.newSet()
	if single {
		var lo, hi uint32
		if len(set.ranges) == 1 {
			lo, hi = set.ranges[0].lo, set.ranges[0].hi
		}
		switch {
		case c.codes8 != nil:
			rangeBits8(t, c.codes8, lo, hi)
		case c.codes16 != nil:
			rangeBits(t, c.codes16, lo, hi)
		default:
			rangeBits(t, c.codes32, lo, hi)
		}
	} else {
		member := codeBits(set, len(c.values))
		switch {
		case c.codes8 != nil:
			memberBits(t, c.codes8, member)
		case c.codes16 != nil:
			memberBits(t, c.codes16, member)
		default:
			memberBits(t, c.codes32, member)
		}
	}
	f = e.newSet()
	for i := range f {
		f[i] = e.all[i] &^ t[i] &^ c.nulls[i]
	}
	return t, f
}

// rangeBits sets the rows whose code c has lo <= c < hi. The test is
// unsigned arithmetic with no branch: c-lo wraps past hi-lo when c < lo, and
// the top bit of (c-lo) - (hi-lo), both below 2^32, is set exactly when c
// is in the range. Each word of 64 rows is built by four accumulators of 16
// rows each, shifted in from the top, so that no step waits on the one
// before it (2.5 times the speed of one accumulator, whatever the code
// width).
func rangeBits[C uint8 | uint16 | uint32](t bitset, codes []C, lo, hi uint32) {
	span := uint64(hi - lo)
	in := func(code C) uint64 { return (uint64(uint32(code)-lo) - span) & topBit }
	full := len(codes) / 64
	for wi := range full {
		c := codes[wi*64 : wi*64+64 : wi*64+64]
		var w0, w1, w2, w3 uint64
		for m := range 16 {
			w0 = w0>>1 | in(c[m])
			w1 = w1>>1 | in(c[16+m])
			w2 = w2>>1 | in(c[32+m])
			w3 = w3>>1 | in(c[48+m])
		}
		t[wi] = w0>>48 | w1>>32 | w2>>16 | w3
	}
	if tail := codes[full*64:]; len(tail) > 0 {
		var w uint64
		for _, code := range tail {
			w = w>>1 | in(code)
		}
		t[full] = w >> (64 - len(tail))
	}
}

const topBit = 1 << 63

// rangeBits8 is rangeBits for 8-bit codes, eight rows at a time: the eight
// codes of a word are split into two words of four 16-bit lanes each (the
// even rows and the odd), and in each lane code + 0x8000 - lo has its top
// bit set exactly when code >= lo, with no carry into the next lane (codes
// and the ends of a range of an 8-bit dictionary are at most 256). The two
// tests' top bits are then gathered into the rows' eight bits by shifts.
// Every word takes the same operations whatever the codes: 1.9 times the
// speed of rangeBits on 8-bit codes.
func rangeBits8(t bitset, codes []uint8, lo, hi uint32) {
	const (
		lanes = 0x00FF00FF00FF00FF
		tops  = 0x8000800080008000
		each  = 0x0001000100010001
	)
	atLo, atHi := uint64(0x8000-lo)*each, uint64(0x8000-hi)*each
	full := len(codes) / 64
	for wi := range full {
		c := codes[wi*64 : wi*64+64 : wi*64+64]
		var w uint64
		for k := range 8 {
			v := binary.LittleEndian.Uint64(c[k*8:])
			even, odd := v&lanes, v>>8&lanes
			m := ((even+atLo)&^(even+atHi)&tops)>>15 | ((odd+atLo)&^(odd+atHi)&tops)>>14
			// Rows 2j and 2j+1 are at bits 16j and 16j+1: bring them to 2j.
			m |= m >> 14
			m |= m >> 28
			w |= (m & 0xFF) << (8 * k)
		}
		t[wi] = w
	}
	if tail := codes[full*64:]; len(tail) > 0 {
		rangeBits(t[full:], tail, lo, hi)
	}
}

// codeBits is the set as one bit per code: a lookup table an eighth the size
// of a word per code, so that it stays in the first-level cache for
// dictionaries of tens of thousands of values and a lookup's time does not
// depend on which code is looked up.
func codeBits(set codeSet, values int) []uint64 {
	member := make([]uint64, (values+63)/64+1)
	set.eachRun(func(lo, hi uint32) {
		for c := lo; c < hi; c++ {
			member[c>>6] |= 1 << (c & 63)
		}
	})
	return member
}

// memberBits sets the rows whose code is in member, with rangeBits' four
// accumulators. It repeats rangeBits' loop rather than sharing it through a
// test passed in: Go calls a type parameter's method or a function value
// through a dictionary or a pointer, which made the pass seven times slower.
func memberBits[C uint8 | uint16 | uint32](t bitset, codes []C, member []uint64) {
	in := func(code C) uint64 {
		c := uint32(code)
		return member[c>>6] << (63 - c&63) & topBit
	}
	full := len(codes) / 64
	for wi := range full {
		c := codes[wi*64 : wi*64+64 : wi*64+64]
		var w0, w1, w2, w3 uint64
		for m := range 16 {
			w0 = w0>>1 | in(c[m])
			w1 = w1>>1 | in(c[16+m])
			w2 = w2>>1 | in(c[32+m])
			w3 = w3>>1 | in(c[48+m])
		}
		t[wi] = w0>>48 | w1>>32 | w2>>16 | w3
	}
	if tail := codes[full*64:]; len(tail) > 0 {
		var w uint64
		for _, code := range tail {
			w = w>>1 | in(code)
		}
		t[full] = w >> (64 - len(tail))
	}
}

// The GROUP BYs of the claiming mechanisms visit every row, not only the
// matching ones, and each unit's every cell, not only its matching ones:
// a row that does not match adds zero where a matching one adds its
// count. Which cells are released is then read off the totals, so the
// work is the rows and each unit's cells under the shape, whatever the
// WHERE holds on.

// oneIf is 1 when n > 0 and 0 when n == 0, for n >= 0, without a branch.
func oneIf(n int64) int64 { return int64(uint64(-n) >> 63) }

// bit is row r's bit of set, as 0 or 1.
func bit(set bitset, r int) int64 { return int64(set[r>>6] >> (uint(r) & 63) & 1) }

// keepFirstOblivious is keepFirst over every row with a unit: each unit's
// matching rows per place are summed, then each of its places is visited,
// in place order, keeping the first maxCells places with a matching row.
func (o *cellOrder) keepFirstOblivious(matched bitset, unit *snapColumn, maxCells, perRow int64, totals *cellTotals) {
	scratch := o.takeScratch()
	defer o.putScratch(scratch) // flush leaves rows zero; marks are not used
	rows, gids := scratch.rows, scratch.gids
	cells := 0 // the places the current unit has
	flush := func() {
		left := maxCells
		for p := range cells {
			keep := oneIf(rows[p]) * oneIf(left)
			totals.addIf(uint64(gids[p]), min(rows[p], perRow)*keep, keep, 0, keep)
			left -= keep
			rows[p] = 0
		}
		cells = 0
	}
	first := unit.firstNonNull()
	if first >= uint32(len(unit.values)) {
		return // every unit NULL
	}
	for u := first; u < uint32(len(unit.values)); u++ {
		for r := int(unit.prefix[u]); r < int(unit.prefix[u+1]); r++ {
			p := o.place[r]
			rows[p] += bit(matched, r)
			gids[p] = o.gid[r]
			cells = max(cells, int(p)+1)
		}
		flush()
	}
}

// groupCellsOblivious is groupCells over every row, for counts alone
// (unit nil) or on a table keyed by its unit (each unit one row).
func groupCellsOblivious(matched bitset, groups []groupColumn, unit *snapColumn, keys []uint32, needs ir.Needs, agg ir.AggKind, rows int) []ir.Cell {
	radix, _ := groupRadix(groups) // groupCells checked that it fits
	totals := newCellTotals(radix, rows)
	for r := range rows {
		m := bit(matched, r)
		if unit == nil {
			totals.addIf(groupID(groups, r), m, 0, 0, m)
			continue
		}
		u := unit.code(r)
		counted := m * (1 - bit(unit.nulls, r)) // a NULL unit is no unit
		var key uint32
		if keys != nil {
			key = keys[u] * uint32(counted)
		}
		totals.addIf(groupID(groups, r), m, counted, key, m)
	}
	return totals.cells(groups, func(c ir.Cell, units int64, key uint32) ir.Cell {
		return finishTally(c, units, key, needs, agg)
	})
}
