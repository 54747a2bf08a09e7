package snapshot

import (
	"math/bits"

	"countwall/ir"
)

// Key grids: on a table keyed by its unit, the rows and the sum of their
// record keys for each pair of value codes of two columns (or each code of
// one). A COUNT whose WHERE reads at most two columns, or a one-column GROUP
// BY whose WHERE reads at most one other, then takes its counts and
// contributor keys from the grid's cells where the condition holds, without
// reading the key of a row: the rows' path reads a key for every matching
// row (or every row it lacks, in a word mostly full), which at a million
// rows costs more than evaluating the condition. The condition is
// evaluated over the grid's cells with the rows' three-valued logic, a
// cell standing for the rows that hold its pair of codes. Only the
// mechanisms that claim no loss ask for keys without Needs.Oblivious, and
// only they take this path: which cells are read follows the condition and
// the dictionaries, and the grids kept follow the queries asked.

// KeyGrids may be turned off by tests, to compare the rows' path with it.
var KeyGrids = true

// keyGrid is the grid of columns a (nil: one column) and b under one
// secret's record keys. Cell a*stride+b holds the rows with codes (a, b);
// stride is b's codes rounded up to a word, so that a code of a is a run of
// whole words and a condition on b one pattern of them.
type keyGrid struct {
	a, b  *snapColumn
	words int      // words per code of a
	keyed []uint32 // the unit keys these were summed with
	// Rows and key sum per cell, each with its total after the cells and
	// its sums per 64 cells beside, as keyedKeySum reads them. The rows
	// are summed mod 2^32 like the keys: a sum of cells is at most the
	// table's rows, below 2^32, so it comes out exact.
	counts, countWords []uint32
	keys, keyWords     []uint32
}

// gridName names a grid of two columns (a empty: one).
type gridName struct{ a, b string }

// maxGridCells bounds a grid's cells (8 bytes each, and 1/8 of a byte for
// their sums per word): an eighth of the rows, so that a grid's words are a
// sixty-fourth of the rows' and its sums at most half its cells, and a grid
// holds about a byte a row at most.
func (snap *Table) maxGridCells() int { return max(snap.rows/8, 4096) }

// The grids of one snapshot hold at most a quarter of its memory: past
// that, conditions on pairs not yet asked take the rows' path.
const gridShare = 4

// gridFor returns the grid of columns a and b (a may be nil), built on first
// use under these keys (one pass over the rows), or nil when it would have
// more cells than maxGridCells or the grids' share of memory is spent.
func (snap *Table) gridFor(a, b *snapColumn, keys []uint32) *keyGrid {
	if a != nil && len(a.values) > len(b.values) || a != nil && len(a.values) == len(b.values) && a.name > b.name {
		a, b = b, a // the fewer codes a, the fewer cells
	}
	na, words := 1, (len(b.values)+63)/64
	name := gridName{b: b.name}
	if a != nil {
		na, name.a = len(a.values), a.name
	}
	if na*words*64 > snap.maxGridCells() || len(keys) == 0 {
		return nil
	}
	if v, ok := snap.grids.Load(name); ok {
		// Keys are one slice per secret (unitKeys): the same slice, the
		// same secret.
		if g := v.(*keyGrid); &g.keyed[0] == &keys[0] {
			return g
		}
	}
	cells := na * words * 64
	if bytes := gridBytes(cells); snap.gridBytes.Add(bytes) > snap.bytes/gridShare {
		snap.gridBytes.Add(-bytes)
		return nil
	}
	g := &keyGrid{a: a, b: b, words: words, keyed: keys,
		counts: make([]uint32, cells+1), countWords: make([]uint32, cells/64),
		keys: make([]uint32, cells+1), keyWords: make([]uint32, cells/64)}
	stride := words * 64
	for r := range snap.rows {
		cell := int(b.code(r))
		if a != nil {
			cell += int(a.code(r)) * stride
		}
		// Keyed by its unit: row r holds unit code r.
		g.counts[cell]++
		g.keys[cell] += keys[r]
	}
	for cell := range cells {
		g.counts[cells] += g.counts[cell]
		g.keys[cells] += g.keys[cell]
		g.countWords[cell>>6] += g.counts[cell]
		g.keyWords[cell>>6] += g.keys[cell]
	}
	if old, loaded := snap.grids.Swap(name, g); loaded {
		snap.gridBytes.Add(-gridBytes(len(old.(*keyGrid).counts) - 1))
	}
	return g
}

// gridBytes is the memory of a grid of cells cells.
func gridBytes(cells int) int64 { return 8*int64(cells) + int64(cells)/8 }

// pred evaluates p over the grid's cells: the cells where it is true and
// where it is false. ok is false for a condition the grid cannot read (a
// column outside it, one the snapshot declines).
func (g *keyGrid) pred(ev *snapEval, p ir.Pred) (t, f bitset, ok bool) {
	switch p := p.(type) {
	case *ir.And:
		lt, lf, ok1 := g.pred(ev, p.Left)
		rt, rf, ok2 := g.pred(ev, p.Right)
		if !ok1 || !ok2 {
			return nil, nil, false
		}
		for i := range lt {
			lt[i] &= rt[i]
			lf[i] |= rf[i]
		}
		return lt, lf, true
	case *ir.Or:
		lt, lf, ok1 := g.pred(ev, p.Left)
		rt, rf, ok2 := g.pred(ev, p.Right)
		if !ok1 || !ok2 {
			return nil, nil, false
		}
		for i := range lt {
			lt[i] |= rt[i]
			lf[i] &= rf[i]
		}
		return lt, lf, true
	case *ir.Not:
		t, f, ok := g.pred(ev, p.Inner)
		return f, t, ok
	case *ir.IsNull:
		c := ev.column(p.Column)
		if c == nil {
			return nil, nil, false
		}
		t, f, ok = g.leaf(c, codeSet{ranges: []codeRange{{0, c.firstNonNull()}}})
		if p.Negate {
			t, f = f, t
		}
		return t, f, ok
	case *ir.Compare, *ir.Between, *ir.In, *ir.Like:
		c, set, negate, ok := ev.leafSet(p)
		if !ok {
			return nil, nil, false
		}
		if t, f, ok = g.leaf(c, set); negate {
			t, f = f, t
		}
		return t, f, ok
	case ir.Derived:
		return g.pred(ev, p.Lower())
	}
	return nil, nil, false
}

// leaf is the cells where column c's code is in set (true) and where it is
// another non-NULL code (false), as leaf finds the rows.
func (g *keyGrid) leaf(c *snapColumn, set codeSet) (t, f bitset, ok bool) {
	in, out := newBitset(len(c.values)), newBitset(len(c.values))
	set.eachRun(func(lo, hi uint32) {
		for code := lo; code < hi; code++ {
			in.set(int(code))
		}
	})
	for code := c.firstNonNull(); code < uint32(len(c.values)); code++ {
		if !in.has(int(code)) {
			out.set(int(code))
		}
	}
	na := 1
	if g.a != nil {
		na = len(g.a.values)
	}
	t, f = make(bitset, na*g.words), make(bitset, na*g.words)
	switch c {
	case g.b: // the same words for every code of a
		for i := 0; i < len(t); i += g.words {
			copy(t[i:i+g.words], in)
			copy(f[i:i+g.words], out)
		}
	case g.a: // whole runs of words, every code of b
		valid := everyRow(len(g.b.values))
		for code := range na {
			switch {
			case in.has(code):
				copy(t[code*g.words:], valid)
			case out.has(code):
				copy(f[code*g.words:], valid)
			}
		}
	default:
		return nil, nil, false
	}
	return t, f, true
}

// sum is the rows and key sum of the cells of set, at most 32 cells a word.
func (g *keyGrid) sum(set bitset) (rows int64, key uint32) {
	return int64(keyedKeySum(set, g.counts, g.countWords)), keyedKeySum(set, g.keys, g.keyWords)
}

// byCode is, for each code of c (a or b), the rows and key sum of the
// cells of set that hold it.
func (g *keyGrid) byCode(set bitset, c *snapColumn) (rows []int64, keys []uint32) {
	rows, keys = make([]int64, len(c.values)), make([]uint32, len(c.values))
	stride := g.words * 64
	for wi, w := range set {
		for ; w != 0; w &= w - 1 {
			cell := wi<<6 | bits.TrailingZeros64(w)
			code := cell % stride
			if c == g.a {
				code = cell / stride
			}
			rows[code] += int64(g.counts[cell])
			keys[code] += g.keys[cell]
		}
	}
	return rows, keys
}

// gridAnswer answers from key grids a query on a table keyed by its unit
// that asks for keys (not under Oblivious): a COUNT whose WHERE reads at
// most two columns, or a GROUP BY on one column whose WHERE reads at most
// one other. ok is false for any other query, or when the grid would be
// larger than maxGridCells (the rows' path answers those).
func (snap *Table) gridAnswer(ev *snapEval, q *ir.Query, groups []groupColumn, unit *snapColumn, keys []uint32, needs ir.Needs, keyed bool) ([]ir.Cell, bool) {
	if !KeyGrids || ev.oblivious || !keyed || keys == nil || len(groups) > 1 {
		return nil, false
	}
	if q.Where == nil { // every row: the keys' total, or the values' tallies
		if len(groups) == 0 {
			n := int64(snap.rows)
			return []ir.Cell{finishTally(ir.Cell{InDomain: true, Count: n}, n, keys[len(keys)-1], needs, q.Agg)}, true
		}
		g := groups[0].snapColumn
		t := snap.valueTallies(g, unit, keys)
		counts, keySums := make([]int64, len(g.values)), make([]uint32, len(g.values))
		for code := range counts {
			counts[code] = t.units[code+1] - t.units[code]
			keySums[code] = t.keys[code+1] - t.keys[code]
		}
		return codeCells(groups[0], counts, keySums, true, needs, q.Agg), true
	}
	var cols []*snapColumn
	if len(groups) == 1 {
		cols = append(cols, groups[0].snapColumn)
	}
	if !predColumns(ev, q.Where, &cols) {
		return nil, false
	}
	var a *snapColumn
	if len(cols) == 2 {
		a = cols[1]
	}
	g := snap.gridFor(a, cols[0], keys)
	if g == nil {
		return nil, false
	}
	set, _, ok := g.pred(ev, q.Where)
	if !ok {
		return nil, false
	}
	if len(groups) == 0 {
		n, key := g.sum(set)
		return []ir.Cell{finishTally(ir.Cell{InDomain: true, Count: n}, n, key, needs, q.Agg)}, true
	}
	counts, keySums := g.byCode(set, groups[0].snapColumn)
	return codeCells(groups[0], counts, keySums, true, needs, q.Agg), true
}

// predColumns adds to cols the columns p reads that are not in it already,
// stopping past three; false when p holds a condition the grids do not read.
func predColumns(ev *snapEval, p ir.Pred, cols *[]*snapColumn) bool {
	var c *snapColumn
	switch p := p.(type) {
	case *ir.And:
		return predColumns(ev, p.Left, cols) && predColumns(ev, p.Right, cols)
	case *ir.Or:
		return predColumns(ev, p.Left, cols) && predColumns(ev, p.Right, cols)
	case *ir.Not:
		return predColumns(ev, p.Inner, cols)
	case ir.Derived:
		return predColumns(ev, p.Lower(), cols)
	case *ir.IsNull:
		c = ev.column(p.Column)
	case *ir.Compare:
		c = ev.column(p.Column)
	case *ir.Between:
		c = ev.column(p.Column)
	case *ir.In:
		c = ev.column(p.Column)
	case *ir.Like:
		c = ev.column(p.Column)
	}
	if c == nil {
		return false
	}
	for _, have := range *cols {
		if have == c {
			return true
		}
	}
	*cols = append(*cols, c)
	return len(*cols) <= 2
}

// KeyGridBytes is the memory the snapshot's key grids hold, beside Bytes:
// at most a quarter of it.
func (snap *Table) KeyGridBytes() int64 { return snap.gridBytes.Load() }

// Bytes is the memory the snapshot holds, as estimated when it was read.
func (snap *Table) Bytes() int64 { return snap.bytes }

// PlaneBytes is the memory the oblivious evaluation's planes, ranks and
// code slices hold beside Bytes, at most maxPlaneSets row sets.
func (snap *Table) PlaneBytes() int64 { return snap.planeBytes.Load() }
