package snapshot

import (
	"cmp"
	"slices"
	"strings"

	"countwall/ir"
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
	// table is the catalog's table, whose declared domains give the
	// oblivious evaluation its planes (planes.go).
	table *ir.Table
	// work counts the oblivious evaluation's passes, for the tests that
	// hold it to public facts.
	work obliviousWork
}

// obliviousWork is the passes an oblivious evaluation made: word passes
// over planes (rows/64 words each), bit planes of ranks read (as many
// words each) and scans of every row's code.
type obliviousWork struct{ planePasses, rankReads, scans int }

func newSnapEval(snap *Table, t *ir.Table, needs ir.Needs) *snapEval {
	return &snapEval{snap: snap, all: snap.allRows, oblivious: needs.Oblivious, table: t}
}

// newSet is an empty row set of the table's size, held until release.
func (e *snapEval) newSet() bitset {
	p := wordScratch.take(len(e.all))
	clear(*p)
	e.sets = append(e.sets, p)
	return *p
}

// newDirtySet is a row set of the table's size whose words the caller
// writes, every one, before reading any.
func (e *snapEval) newDirtySet() bitset {
	p := wordScratch.take(len(e.all))
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

// matched is the rows q's WHERE holds on (every row without one); ok is
// false when the snapshot cannot evaluate it.
func (ev *snapEval) matched(q *ir.Query) (bitset, bool) {
	if q.Where == nil {
		return ev.all, true
	}
	if ev.oblivious {
		tr, _, evaluated := ev.obliviousPred(q.Where, false)
		return tr, evaluated
	}
	tr, _, evaluated := ev.pred(q.Where, ev.all, false)
	return tr, evaluated
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
