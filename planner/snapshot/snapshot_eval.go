package snapshot

import (
	"cmp"
	"countwall/ir"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// snapEval evaluates a predicate over a snapshot with SQL's three-valued
// logic: each node yields, among the rows of a mask, those where it is true
// and (when asked) those where it is false; the rest are unknown. ok is false
// when some part of the predicate is one the snapshot declines to answer (the
// caller then asks SQLite).
//
// The mask is what makes long conjunctions cheap: the right side of an AND
// is evaluated only on the rows where the left side holds, one row at a time
// once those are few, so a reconstruction query with a dozen equalities costs
// about one scan of the table rather than a dozen.
type snapEval struct {
	snap *Table
	all  bitset // every row; shared by every query, so never written
	// sets are the row sets the evaluation took from wordScratch (a
	// query's sets are a few times the table's rows in bits, which would
	// otherwise be garbage every query), returned by release once its
	// result has been read.
	sets []*[]uint64
	// oblivious evaluates every condition over every row (oblivious.go)
	// rather than the cheapest way.
	oblivious bool
}

func newSnapEval(snap *Table, needs ir.Needs) *snapEval {
	return &snapEval{snap: snap, all: snap.allRows, oblivious: needs.Oblivious}
}

// newSet is an empty row set of the table's size, held until release.
func (e *snapEval) newSet() bitset {
	p := wordScratch.take(len(e.all))
	clear(*p)
	e.sets = append(e.sets, p)
	return *p
}

// release returns the evaluation's row sets to the pool: nothing it
// returned may be read after.
func (e *snapEval) release() {
	for _, p := range e.sets {
		wordScratch.put(p)
	}
	e.sets = nil
}

// everyRow is the set of rows 0..rows-1.
func everyRow(rows int) bitset {
	all := newBitset(rows)
	for i := range all {
		all[i] = math.MaxUint64
	}
	if r := rows & 63; r != 0 {
		all[len(all)-1] = 1<<uint(r) - 1
	}
	return all
}

func (e *snapEval) pred(p ir.Pred, mask bitset, wantF bool) (t, f bitset, ok bool) {
	switch p := p.(type) {
	case *ir.And:
		if !wantF {
			return e.conjunction(p, mask)
		}
		lt, lf, ok := e.pred(p.Left, mask, wantF)
		if !ok {
			return nil, nil, false
		}
		rmask := mask
		if !wantF {
			rmask = lt // only rows true on the left can be true here
		}
		rt, rf, ok := e.pred(p.Right, rmask, wantF)
		if !ok {
			return nil, nil, false
		}
		for i := range lt {
			lt[i] &= rt[i]
			if wantF {
				lf[i] |= rf[i]
			}
		}
		return lt, lf, true
	case *ir.Or:
		lt, lf, ok := e.pred(p.Left, mask, wantF)
		if !ok {
			return nil, nil, false
		}
		rmask := mask
		if !wantF {
			rmask = e.andNot(mask, lt) // rows already true need no second look
		}
		rt, rf, ok := e.pred(p.Right, rmask, wantF)
		if !ok {
			return nil, nil, false
		}
		for i := range lt {
			lt[i] |= rt[i]
			if wantF {
				lf[i] &= rf[i]
			}
		}
		return lt, lf, true
	case *ir.Not:
		it, inf, ok := e.pred(p.Inner, mask, true)
		return inf, it, ok
	case *ir.IsNull:
		c := e.column(p.Column)
		if c == nil {
			return nil, nil, false
		}
		t, f = e.newSet(), e.newSet()
		for i := range t {
			t[i] = mask[i] & c.nulls[i]
			f[i] = mask[i] &^ c.nulls[i]
		}
		if p.Negate {
			t, f = f, t
		}
		return t, f, true
	case *ir.Compare, *ir.Between, *ir.In, *ir.Like:
		c, set, negate, ok := e.leafSet(p)
		if !ok {
			return nil, nil, false
		}
		t, f = e.leaf(c, set, negate, mask, wantF)
		return t, f, true
	case ir.Derived:
		return e.pred(p.Lower(), mask, wantF)
	}
	// MathCompare and anything new run in SQLite.
	return nil, nil, false
}

// leafSet resolves a column condition to its column and the value codes for
// which it holds (before negation). ok is false when the snapshot declines it.
func (e *snapEval) leafSet(p ir.Pred) (c *snapColumn, set codeSet, negate, ok bool) {
	var column string
	switch p := p.(type) {
	case *ir.Compare:
		column = p.Column
	case *ir.Between:
		column, negate = p.Column, p.Negate
	case *ir.In:
		column, negate = p.Column, p.Negate
	case *ir.Like:
		column, negate = p.Column, p.Negate
	default:
		return nil, codeSet{}, false, false
	}
	if c = e.column(column); c == nil || c.collated {
		return nil, codeSet{}, false, false
	}
	set, ok = c.codesWhere(p)
	return c, set, negate, ok
}

// codesWhere is the set of value codes on which a leaf condition holds.
func (c *snapColumn) codesWhere(p ir.Pred) (codeSet, bool) {
	switch p := p.(type) {
	case *ir.Compare:
		lit, ok := literalFor(c, p.Value)
		if !ok {
			return codeSet{}, false
		}
		lo, hi, nn, d := c.lowerBound(lit), c.upperBound(lit), c.firstNonNull(), uint32(len(c.values))
		switch p.Op {
		case "=":
			return ranges(codeRange{lo, hi}), true
		case "<>", "!=":
			return ranges(codeRange{nn, lo}, codeRange{hi, d}), true
		case "<":
			return ranges(codeRange{nn, lo}), true
		case "<=":
			return ranges(codeRange{nn, hi}), true
		case ">":
			return ranges(codeRange{hi, d}), true
		case ">=":
			return ranges(codeRange{lo, d}), true
		}
	case *ir.Between:
		lo, ok1 := literalFor(c, p.Lo)
		hi, ok2 := literalFor(c, p.Hi)
		if ok1 && ok2 {
			return ranges(codeRange{c.lowerBound(lo), c.upperBound(hi)}), true
		}
	case *ir.In:
		if len(p.Values) == 0 {
			return codeSet{}, false
		}
		rs := make([]codeRange, len(p.Values))
		for i, l := range p.Values {
			lit, ok := literalFor(c, l)
			if !ok {
				return codeSet{}, false
			}
			rs[i] = codeRange{c.lowerBound(lit), c.upperBound(lit)}
		}
		return ranges(rs...), true
	case *ir.Like:
		// Every storage class is read as SQLite's LIKE reads it (like.go),
		// so that no value's class or bytes send the query elsewhere.
		lut := make([]uint64, len(c.values))
		for i, v := range c.values {
			if text, ok := c.likeText(v); ok {
				lut[i] = b2u(likeMatches(text, p.Pattern))
			}
		}
		return codeSet{lut: lut}, true
	}
	return codeSet{}, false
}

// likeText is the text SQLite's LIKE reads a value as: an integer in
// decimal, a real as SQLite renders it (read from SQLite with the table),
// text as its bytes. ok is false for NULL, which LIKE leaves unknown, and
// for a blob, which SQLite's LIKE never matches (it is built with
// SQLITE_LIKE_DOESNT_MATCH_BLOBS): false, not unknown, so NOT LIKE holds.
func (c *snapColumn) likeText(v dictValue) (string, bool) {
	switch v.class {
	case classInt:
		return strconv.FormatInt(v.i, 10), true
	case classReal:
		text, ok := c.realText[math.Float64bits(v.f)]
		return text, ok
	case classText:
		return v.s, true
	}
	return "", false
}

// rowsIn is how many rows hold a code of the set (NULL rows never do).
func (c *snapColumn) rowsIn(set codeSet) int64 {
	var n int64
	set.eachRun(func(lo, hi uint32) { n += int64(c.prefix[hi] - c.prefix[lo]) })
	return n
}

// eachRun calls f with each run of codes lo..hi-1 in the set.
func (s codeSet) eachRun(f func(lo, hi uint32)) {
	if s.lut == nil {
		for _, r := range s.ranges {
			f(r.lo, r.hi)
		}
		return
	}
	for code, in := range s.lut {
		if in != 0 {
			f(uint32(code), uint32(code)+1)
		}
	}
}

// conjunction evaluates a chain of ANDs for its true rows only, most
// selective condition first (counted from the dictionary's per-value row
// counts), each on the rows the ones before it kept.
func (e *snapEval) conjunction(p *ir.And, mask bitset) (t, f bitset, ok bool) {
	type conjunct struct {
		pred   ir.Pred
		c      *snapColumn
		set    codeSet
		negate bool
		rows   int64 // rows where it can hold, at most
	}
	parts := make([]conjunct, 0, 8) // one allocation for the usual few
	var flatten func(ir.Pred) bool
	flatten = func(p ir.Pred) bool {
		if a, isAnd := p.(*ir.And); isAnd {
			return flatten(a.Left) && flatten(a.Right)
		}
		c, set, negate, ok := e.leafSet(p)
		switch {
		case ok && !negate:
			parts = append(parts, conjunct{pred: p, c: c, set: set, rows: c.rowsIn(set)})
		case ok:
			parts = append(parts, conjunct{pred: p, c: c, set: set, negate: true, rows: int64(e.snap.rows)})
		case c != nil || isLeaf(p):
			return false // a leaf the snapshot declines
		default:
			parts = append(parts, conjunct{pred: p, rows: int64(e.snap.rows) + 1}) // OR, NOT, IS NULL: last
		}
		return true
	}
	if !flatten(p) {
		return nil, nil, false
	}
	if len(mask) == 0 { // an empty table
		return bitset{}, nil, true
	}
	slices.SortStableFunc(parts, func(a, b conjunct) int { return cmp.Compare(a.rows, b.rows) })
	t = mask
	for _, part := range parts {
		if part.c != nil {
			t, _ = e.leaf(part.c, part.set, part.negate, t, false)
		} else if t, _, ok = e.pred(part.pred, t, false); !ok {
			return nil, nil, false
		}
	}
	if &t[0] == &mask[0] { // nothing narrowed it: hand back a copy, callers write to t
		t = e.newSet()
		copy(t, mask)
	}
	return t, nil, true
}

// isLeaf reports whether p is a column condition leafSet resolves.
func isLeaf(p ir.Pred) bool {
	switch p.(type) {
	case *ir.Compare, *ir.Between, *ir.In, *ir.Like:
		return true
	}
	return false
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func (e *snapEval) andNot(a, b bitset) bitset {
	out := e.newSet()
	for i := range a {
		out[i] = a[i] &^ b[i]
	}
	return out
}

func (e *snapEval) column(name string) *snapColumn {
	return e.snap.columns[strings.ToLower(name)]
}

// codeRange is the value codes lo <= code < hi.
type codeRange struct{ lo, hi uint32 }

// codeSet is the value codes for which a condition holds: sorted disjoint
// ranges (the dictionary is in SQLite's order, so a comparison holds on a
// run of codes) or, for LIKE, a lookup table with 1 where it holds.
type codeSet struct {
	ranges []codeRange
	lut    []uint64
}

// ranges sorts, merges and drops empty ranges.
func ranges(rs ...codeRange) codeSet {
	out := make([]codeRange, 0, len(rs))
	slices.SortFunc(rs, func(a, b codeRange) int { return cmp.Compare(a.lo, b.lo) })
	for _, r := range rs {
		if r.lo >= r.hi {
			continue
		}
		if n := len(out); n > 0 && r.lo <= out[n-1].hi {
			out[n-1].hi = max(out[n-1].hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	return codeSet{ranges: out}
}

func (s codeSet) has(code uint32) bool {
	if s.lut != nil {
		return s.lut[code] != 0
	}
	for _, r := range s.ranges {
		if code < r.lo {
			return false
		}
		if code < r.hi {
			return true
		}
	}
	return false
}

// table is the set as a lookup table over a dictionary of n values.
func (s codeSet) table(n int) []uint64 {
	if s.lut != nil {
		return s.lut
	}
	lut := make([]uint64, n)
	for _, r := range s.ranges {
		for c := r.lo; c < r.hi; c++ {
			lut[c] = 1
		}
	}
	return lut
}

// lowerBound is the first code whose value is >= v; upperBound the first > v.
func (c *snapColumn) lowerBound(v dictValue) uint32 {
	i, _ := slices.BinarySearchFunc(c.values, v, compareDict)
	return uint32(i)
}

func (c *snapColumn) upperBound(v dictValue) uint32 {
	return uint32(sort.Search(len(c.values), func(i int) bool { return compareDict(c.values[i], v) > 0 }))
}

// firstNonNull is the first code that is not NULL (NULL sorts first).
func (c *snapColumn) firstNonNull() uint32 {
	if len(c.values) > 0 && c.values[0].class == classNull {
		return 1
	}
	return 0
}

// literalFor converts a literal to the value SQLite compares the column's
// values with. Only the pairs where SQLite applies no conversion to the
// literal are accepted: a number against a column of numeric affinity, text
// against a column of text or no affinity. Elsewhere SQLite's conversions
// decide, so SQLite answers: a decision made from the statement and the
// schema alone. Text stored in a column of numeric affinity needs no care:
// SQLite converts text that reads as a number when it is stored, with the
// same conversion it applies when comparing, so text that is still text
// compares as text, after every number, here as there.
func literalFor(c *snapColumn, l ir.Literal) (dictValue, bool) {
	switch {
	case c.affinity == affinityNumeric && l.Kind == ir.LitInt:
		return dictValue{class: classInt, i: l.Int}, true
	case c.affinity == affinityNumeric && l.Kind == ir.LitFloat:
		if math.IsNaN(l.Float) {
			return dictValue{}, false
		}
		return dictValue{class: classReal, f: l.Float}, true
	case c.affinity != affinityNumeric && l.Kind == ir.LitText:
		return dictValue{class: classText, s: l.Text}, true
	}
	return dictValue{}, false
}
