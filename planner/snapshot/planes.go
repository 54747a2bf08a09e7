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

// planesFor is the column's planes over its declared domain d, built at
// the first condition that needs them and kept with the snapshot; nil
// when d declares more than maxPlaneDomain values.
func (e *snapEval) planesFor(c *snapColumn, name string) *domainPlanes {
	col := e.table.Columns[strings.ToLower(name)]
	if col == nil || col.Domain == nil || col.Domain.Size() > maxPlaneDomain {
		return nil
	}
	d := col.Domain
	if p := c.planes.Load(); p != nil && p.domain == d {
		return p
	}
	if c.planesRefused.Load() == d {
		return nil
	}
	c.planesMu.Lock()
	defer c.planesMu.Unlock()
	if p := c.planes.Load(); p != nil && p.domain == d {
		return p
	}
	if c.planesRefused.Load() == d {
		return nil
	}
	if sets := int64(2*d.Size() + 2); e.snap.planeSets.Add(sets) > maxPlaneSets {
		e.snap.planeSets.Add(-sets)
		c.planesRefused.Store(d)
		return nil
	}
	p := buildPlanes(c, d, e.all)
	if old := c.planes.Load(); old != nil {
		e.snap.planeSets.Add(-int64(2*old.domain.Size() + 2)) // a reload's new domain replaces it
	}
	c.planes.Store(p)
	return p
}

// domainLiterals are a domain's values as literals of a statement.
func domainLiterals(d *ir.Domain) []ir.Literal {
	var out []ir.Literal
	if d.IsRange {
		for v := d.Min; v <= d.Max; v++ {
			out = append(out, ir.Literal{Kind: ir.LitInt, Int: v})
		}
		return out
	}
	for _, s := range d.Categories {
		out = append(out, ir.Literal{Kind: ir.LitText, Text: s})
	}
	return out
}

// buildPlanes sorts the rows into the classes the domain's values cut the
// dictionary into (one row pass), then makes each class's plane the union
// of the classes before it (one word pass a distinct cut).
func buildPlanes(c *snapColumn, d *ir.Domain, all bitset) *domainPlanes {
	p := &domainPlanes{domain: d, none: newBitset(c.rows()), nonNull: newBitset(c.rows())}
	for _, l := range domainLiterals(d) {
		if v, ok := literalFor(c, l); ok {
			p.values = append(p.values, v)
		}
	}
	slices.SortFunc(p.values, compareDict)
	p.values = slices.CompactFunc(p.values, func(a, b dictValue) bool { return compareDict(a, b) == 0 })
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

// index is the place of v among the domain's values; ok is false when v is
// not one of them.
func (p *domainPlanes) index(v dictValue) (int, bool) {
	return slices.BinarySearchFunc(p.values, v, compareDict)
}

// planeLeaf evaluates a comparison, BETWEEN or IN from the planes of its
// column's declared domain (t true, f false); ok is false when the column
// has none or a literal is not a domain value, and the scan answers.
func (e *snapEval) planeLeaf(p ir.Pred) (t, f bitset, ok bool) {
	column, lits, negate := planeLiterals(p)
	c := e.column(column)
	if c == nil || c.collated || len(lits) == 0 {
		return nil, nil, false
	}
	planes := e.planesFor(c, column)
	if planes == nil {
		return nil, nil, false
	}
	var at [8]int
	idx := at[:0]
	for _, l := range lits {
		v, ok := literalFor(c, l)
		if !ok {
			return nil, nil, false
		}
		i, ok := planes.index(v)
		if !ok {
			return nil, nil, false
		}
		idx = append(idx, i)
	}
	t = e.newSet()
	passes := 2 // the true rows and the false
	switch p := p.(type) {
	case *ir.Compare:
		i := idx[0]
		switch p.Op {
		case "=":
			andNot(t, planes.upto[i], planes.below[i])
		case "<>", "!=":
			andNot(t, planes.upto[i], planes.below[i])
			negate = true
		case "<":
			andNot(t, planes.below[i], planes.none)
		case "<=":
			andNot(t, planes.upto[i], planes.none)
		case ">":
			andNot(t, planes.nonNull, planes.upto[i])
		case ">=":
			andNot(t, planes.nonNull, planes.below[i])
		default:
			return nil, nil, false
		}
	case *ir.Between:
		andNot(t, planes.upto[idx[1]], planes.below[idx[0]])
	case *ir.In:
		for _, i := range idx {
			orAndNot(t, planes.upto[i], planes.below[i])
		}
		passes += len(idx) - 1
	}
	e.work.planePasses += passes
	f = e.newSet()
	for i := range f {
		f[i] = e.all[i] &^ t[i] &^ c.nulls[i]
	}
	if negate {
		t, f = f, t
	}
	return t, f, true
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

// orAndNot adds a &^ b to t, a word pass.
func orAndNot(t, a, b bitset) {
	a, b = a[:len(t)], b[:len(t)]
	for i := range t {
		t[i] |= a[i] &^ b[i]
	}
}
