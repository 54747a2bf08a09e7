package snapshot

import (
	"slices"
	"strings"

	"countwall/ir"
)

// Planes over declared domains, for the oblivious evaluation. A scan reads
// every row's code for every leaf condition (0.4 ns a row); a condition on
// a value of the column's declared domain is instead answered from row
// sets kept per domain value: below[i] holds the non-NULL rows whose value
// sorts below the domain's i-th value, upto[i] those whose value does not
// sort above it. Every comparison, BETWEEN and IN whose literals are all
// domain values is then one word pass per literal over two of these sets
// (upto &^ below is the rows equal to a value), rows/64 words each. Which
// sets are read and how many passes are made follow the statement, the
// config's domain and the table's rows; a literal outside the domain, or a
// column without a domain or with one of more than maxPlaneDomain values,
// takes the scan, decided by the same public facts.

// maxPlaneDomain is the largest declared domain given planes: a column's
// planes hold at most 2*maxPlaneDomain+2 row sets, rows/8 bytes each.
const maxPlaneDomain = 256

// maxPlaneSets bounds the row sets all of a snapshot's planes may hold,
// 2,048 of rows/8 bytes, 256 bytes a row at worst (the people table's
// domains reserve about 1,100 and share their way down to about 470): a config that declares many
// domains must not multiply the snapshot's memory. Each column reserves
// its worst case, 2K+2 sets for a domain of K values, so that whether it
// gets planes follows the config, the table's size and which columns
// statements compared first, never the rows; a column refused keeps the
// scan until the snapshot is read again.
const maxPlaneSets = 2048

// domainPlanes are one column's row sets over one declared domain.
type domainPlanes struct {
	domain *ir.Domain
	// values are the domain's values as the column reads a literal of
	// them, in SQLite's order, each once; below and upto are theirs.
	values      []dictValue
	below, upto []bitset
	none        bitset // no row: below the first non-NULL code
	nonNull     bitset // every non-NULL row: below past the last code
	bytes       int64  // the row sets' memory (equal sets are shared)
}

// domainRows answers conditions on a column's declared domain from row
// sets kept for it. Places on the domain's line are ranks: for a domain of
// K values in SQLite's order, rank 2i+1 is the i-th value and 2i the gap
// below it (2K the gap past the last), so that a stored value that is not
// a domain value has its place too.
type domainRows interface {
	// size is K, the domain's values as the column reads them.
	size() int
	// index is v's place among the domain's values; ok is false when v is
	// not one of them.
	index(v dictValue) (int, bool)
	// fill writes into t, as mode says, the non-NULL rows whose rank is in
	// [lo, hi).
	fill(t bitset, lo, hi int, mode fillMode)
	// work is what a fill of [lo, hi) reads: word passes over planes, and
	// bit planes of ranks read.
	work(lo, hi int) (passes, reads int)
	memory() int64
}

// domainIndex is a column's row sets over one declared domain, and the sets
// it reserved of maxPlaneSets.
type domainIndex struct {
	domain *ir.Domain
	sets   int64
	rows   domainRows
}

// reservedSets is the row sets a column's index over d may hold at worst:
// two a value for planes, a bit of rank (and the non-NULL rows) for ranks;
// 0 when d is too wide for either. It follows the config alone.
func reservedSets(d *ir.Domain) int64 {
	switch k := d.Size(); {
	case k <= maxPlaneDomain:
		return 2*k + 2
	case k <= maxRankDomain:
		return int64(rankBits(int(k))) + 1
	}
	return 0
}

// domainRowsFor is the column's row sets over its declared domain, built
// at the first condition that needs them and kept with the snapshot; nil
// when it has none, the domain is too wide, or the budget is spent.
func (e *snapEval) domainRowsFor(c *snapColumn, name string) domainRows {
	col := e.table.Columns[strings.ToLower(name)]
	if col == nil || col.Domain == nil {
		return nil
	}
	d := col.Domain
	sets := reservedSets(d)
	if sets == 0 {
		return nil
	}
	if p := c.planes.Load(); p != nil && p.domain == d {
		return p.rows
	}
	if c.planesRefused.Load() == d {
		return nil
	}
	c.planesMu.Lock()
	defer c.planesMu.Unlock()
	old := c.planes.Load()
	if old != nil && old.domain == d {
		return old.rows
	}
	if c.planesRefused.Load() == d {
		return nil
	}
	// A reload reads the config afresh: the same domain keeps its planes,
	// and a new one replaces them, within the sets they held.
	var held int64
	if old != nil {
		if sameDomain(old.domain, d) {
			c.planes.Store(&domainIndex{domain: d, sets: old.sets, rows: old.rows})
			return old.rows
		}
		held = old.sets
	}
	var rows domainRows
	if e.snap.planeSets.Add(sets-held) <= maxPlaneSets {
		if d.Size() <= maxPlaneDomain {
			rows = buildPlanes(c, d, e.all)
		} else if r := buildRanks(c, d, e.all); r != nil {
			rows = r
		}
	}
	if old != nil {
		e.snap.planeBytes.Add(-old.rows.memory())
	}
	if rows == nil { // the old planes go too: no statement of this config reads them
		e.snap.planeSets.Add(-sets)
		c.planes.Store(nil)
		c.planesRefused.Store(d)
		return nil
	}
	e.snap.planeBytes.Add(rows.memory())
	c.planes.Store(&domainIndex{domain: d, sets: sets, rows: rows})
	return rows
}

// sameDomain reports whether a and b declare the same values in the same
// order.
func sameDomain(a, b *ir.Domain) bool {
	return a.IsRange == b.IsRange && a.Min == b.Min && a.Max == b.Max && slices.Equal(a.Categories, b.Categories)
}

// sortedDomainValues are the domain's values as the column reads a literal
// of them, in SQLite's order, each once.
func sortedDomainValues(c *snapColumn, d *ir.Domain) []dictValue {
	var values []dictValue
	for i := range int(d.Size()) {
		if v, ok := literalFor(c, domainLiteral(d, i)); ok {
			values = append(values, v)
		}
	}
	slices.SortFunc(values, compareDict)
	return slices.CompactFunc(values, func(a, b dictValue) bool { return compareDict(a, b) == 0 })
}

// buildPlanes sorts the rows into the classes the domain's values cut the
// dictionary into (one row pass), then makes each class's plane the union
// of the classes before it (one word pass a distinct cut).
func buildPlanes(c *snapColumn, d *ir.Domain, all bitset) *domainPlanes {
	p := &domainPlanes{domain: d, none: newBitset(c.rows()), nonNull: newBitset(c.rows())}
	p.values = sortedDomainValues(c, d)
	// The cuts: each value's first code and the first code past it.
	cuts := make([]uint32, 0, 2*len(p.values))
	for _, v := range p.values {
		cuts = append(cuts, c.lowerBound(v), c.upperBound(v))
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	// class[code] is the first cut above the code: the row is in the
	// planes of that cut and every later one.
	nn := c.firstNonNull()
	class := make([]uint16, len(c.values))
	for code := range class {
		k, _ := slices.BinarySearch(cuts, uint32(code)+1)
		class[code] = uint16(k)
		if uint32(code) < nn {
			class[code] = uint16(len(cuts)) // NULL is in no plane
		}
	}
	planes := make([]bitset, len(cuts))
	for k := range planes {
		planes[k] = newBitset(c.rows())
	}
	for r := range c.rows() {
		if k := int(class[c.code(r)]); k < len(planes) {
			planes[k].set(r)
		}
	}
	for k := 1; k < len(planes); k++ {
		prev, cur := planes[k-1], planes[k]
		for i := range cur {
			cur[i] |= prev[i]
		}
	}
	for i := range p.nonNull {
		p.nonNull[i] = all[i] &^ c.nulls[i]
	}
	plane := func(code uint32) bitset {
		k, _ := slices.BinarySearch(cuts, code)
		return planes[k]
	}
	for _, v := range p.values {
		p.below = append(p.below, plane(c.lowerBound(v)))
		p.upto = append(p.upto, plane(c.upperBound(v)))
	}
	p.bytes = 8 * int64(len(p.none)) * int64(len(planes)+2)
	return p
}

func (p *domainPlanes) size() int     { return len(p.values) }
func (p *domainPlanes) memory() int64 { return p.bytes }

// index is the place of v among the domain's values; ok is false when v is
// not one of them.
func (p *domainPlanes) index(v dictValue) (int, bool) {
	return slices.BinarySearchFunc(p.values, v, compareDict)
}

// less is the rows whose rank is below k: below[i] holds the ranks up to
// 2i, upto[i] those up to 2i+1.
func (p *domainPlanes) less(k int) bitset {
	switch {
	case k <= 0:
		return p.none
	case k > 2*len(p.values):
		return p.nonNull
	case k%2 == 1:
		return p.below[k/2]
	}
	return p.upto[k/2-1]
}

func (p *domainPlanes) fill(t bitset, lo, hi int, mode fillMode) {
	switch mode {
	case fillSet:
		andNot(t, p.less(hi), p.less(lo))
	case fillOr:
		orAndNot(t, p.less(hi), p.less(lo))
	case fillAnd:
		andAndNot(t, p.less(hi), p.less(lo))
	}
}

func (p *domainPlanes) work(lo, hi int) (passes, reads int) { return 1, 0 }

// fillMode is how a fill writes its rows into a set: in place of what it
// held, added to it, or kept only where it held.
type fillMode int

const (
	fillSet fillMode = iota
	fillOr
	fillAnd
)

// planeLeaf evaluates a comparison, BETWEEN or IN from the row sets of its
// column's declared domain (t true, f false); ok is false when the column
// has none or a literal is not a domain value, and the scan answers.
func (e *snapEval) planeLeaf(p ir.Pred, wantF bool) (t, f bitset, ok bool) {
	var buf [8][2]int
	c, rows, spans, negate, ok := e.planeSpans(p, buf[:0])
	if !ok {
		return nil, nil, false
	}
	t = e.newDirtySet()
	for k, r := range spans {
		mode := fillSet
		if k > 0 {
			mode = fillOr
		}
		e.fillSpan(rows, t, r, mode)
	}
	return e.falseRows(c, t, negate, wantF)
}

// planeLeafInto keeps in acc only the rows where p holds, in one pass, when
// p is a comparison or BETWEEN answered from its domain's row sets; false
// (acc untouched) for anything else, decided by the statement and the
// config.
func (e *snapEval) planeLeafInto(p ir.Pred, acc bitset) bool {
	var buf [8][2]int
	_, rows, spans, negate, ok := e.planeSpans(p, buf[:0])
	if !ok || negate || len(spans) != 1 {
		return false
	}
	e.fillSpan(rows, acc, spans[0], fillAnd)
	return true
}

func (e *snapEval) fillSpan(rows domainRows, t bitset, span [2]int, mode fillMode) {
	rows.fill(t, span[0], span[1], mode)
	passes, reads := rows.work(span[0], span[1])
	e.work.planePasses += passes
	e.work.rankReads += reads
}

// planeSpans is p's column, the row sets of its declared domain, and the
// ranks [lo, hi) its literals' conditions hold on (one a literal), appended
// to spans; ok is false when the column has no such sets or a literal is
// not a domain value.
func (e *snapEval) planeSpans(p ir.Pred, spans [][2]int) (c *snapColumn, rows domainRows, _ [][2]int, negate, ok bool) {
	column, lits, negate := planeLiterals(p)
	if c = e.column(column); c == nil || c.collated || len(lits) == 0 {
		return nil, nil, nil, false, false
	}
	if rows = e.domainRowsFor(c, column); rows == nil {
		return nil, nil, nil, false, false
	}
	var at [8]int
	idx := at[:0]
	for _, l := range lits {
		v, ok := literalFor(c, l)
		if !ok {
			return nil, nil, nil, false, false
		}
		i, ok := rows.index(v)
		if !ok {
			return nil, nil, nil, false, false
		}
		idx = append(idx, i)
	}
	end := 2*rows.size() + 1
	value := func(i int) [2]int { return [2]int{2*i + 1, 2*i + 2} }
	switch p := p.(type) {
	case *ir.Compare:
		i := idx[0]
		switch p.Op {
		case "=":
			spans = append(spans, value(i))
		case "<>", "!=":
			spans = append(spans, value(i))
			negate = true
		case "<":
			spans = append(spans, [2]int{0, 2*i + 1})
		case "<=":
			spans = append(spans, [2]int{0, 2*i + 2})
		case ">":
			spans = append(spans, [2]int{2*i + 2, end})
		case ">=":
			spans = append(spans, [2]int{2*i + 1, end})
		default:
			return nil, nil, nil, false, false
		}
	case *ir.Between:
		spans = append(spans, [2]int{2*idx[0] + 1, 2*idx[1] + 2})
	case *ir.In:
		for _, i := range idx {
			spans = append(spans, value(i))
		}
	}
	return c, rows, spans, negate, true
}

// planeLiterals is a leaf's column, its literals (Between's low then high)
// and whether it is negated; no literals for any other condition.
func planeLiterals(p ir.Pred) (column string, lits []ir.Literal, negate bool) {
	switch p := p.(type) {
	case *ir.Compare:
		return p.Column, []ir.Literal{p.Value}, false
	case *ir.Between:
		return p.Column, []ir.Literal{p.Lo, p.Hi}, p.Negate
	case *ir.In:
		return p.Column, p.Values, p.Negate
	}
	return "", nil, false
}

// andNot sets t to a &^ b, a word pass.
func andNot(t, a, b bitset) {
	a, b = a[:len(t)], b[:len(t)]
	for i := range t {
		t[i] = a[i] &^ b[i]
	}
}

// andAndNot keeps in t only a &^ b, a word pass.
func andAndNot(t, a, b bitset) {
	a, b = a[:len(t)], b[:len(t)]
	for i := range t {
		t[i] &= a[i] &^ b[i]
	}
}

// orAndNot adds a &^ b to t, a word pass.
func orAndNot(t, a, b bitset) {
	a, b = a[:len(t)], b[:len(t)]
	for i := range t {
		t[i] |= a[i] &^ b[i]
	}
}
