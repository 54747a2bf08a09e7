package snapshot

import (
	"sync/atomic"

	"countwall/ir"
)

// Planes over a small dictionary, for the oblivious evaluation of a column
// with no declared domain (or a literal outside it). A column whose
// dictionary fits a byte (the codes the scan reads as codes8) keeps, per
// code k, the rows whose code is below k: a condition's code ranges are
// then a word pass each, as the domain's planes are. The passes follow the
// statement: the ranges a condition of its kind has (one for a
// comparison or BETWEEN, two for <>, one a literal of IN), whether or not
// the dictionary holds its literals or merges its ranges; a range the
// dictionary does not hold is a pass over empty sets. How many planes there
// are follows the dictionary, like the scan's choice of code width, and
// only the memory moves with it.

// A column whose codes are two bytes wide keeps them bit-sliced instead
// (codeSlices, 17 planes, as domainRanks keep ranks): a condition is one
// word operation a plane, with the kernel its kind of condition picks; a
// literal the dictionary does not hold runs the same kernel and keeps no
// row.

// codeSliceBits is the bits of a code slice: codes16's, and one more for
// the code past the last.
const codeSliceBits = 17

// dictPlaneSets is what a column's dictionary planes reserve of
// maxPlaneSets: one set a code of a byte, and the empty one.
const dictPlaneSets = 257

// dictPlanes are less[k]: the rows whose code is below k.
type dictPlanes struct{ less []bitset }

// dictPlanesFor is c's dictionary planes, built at the first condition that
// needs them; nil when the column's codes are wider than a byte or the
// budget is spent.
func (e *snapEval) dictPlanesFor(c *snapColumn) *dictPlanes {
	if c.codes8 == nil {
		return nil
	}
	return builtOnce(e, c, &c.dictPlanes, dictPlaneSets, func() (*dictPlanes, int64) {
		p := &dictPlanes{less: make([]bitset, len(c.values)+1)}
		for k := range p.less {
			p.less[k] = newBitset(c.rows())
		}
		for r, code := range c.codes8 {
			p.less[int(code)+1].set(r) // moved below every later code next
		}
		for k := 2; k < len(p.less); k++ {
			prev, cur := p.less[k-1], p.less[k]
			for i := range cur {
				cur[i] |= prev[i]
			}
		}
		return p, 8 * int64(len(p.less)) * int64(len(p.less[0]))
	})
}

// codeSlicesFor is c's codes bit-sliced, built at the first condition that
// needs them; nil when the column's codes are not two bytes wide or the
// budget is spent.
func (e *snapEval) codeSlicesFor(c *snapColumn) *domainRanks {
	if c.codes16 == nil {
		return nil
	}
	return builtOnce(e, c, &c.codeSlices, codeSliceBits+1, func() (*domainRanks, int64) {
		s := &domainRanks{bits: codeSliceBits, nonNull: newBitset(c.rows())}
		codes := make([]uint32, len(c.values))
		for code := range codes {
			codes[code] = uint32(code)
		}
		s.slice(c, codes, e.all)
		return s, s.memory()
	})
}

// builtOnce is what slot holds, built by build under the column's lock the
// first time, when the snapshot's budget has the sets for it; nil once the
// budget refused the column.
func builtOnce[T any](e *snapEval, c *snapColumn, slot *atomic.Pointer[T], sets int64, build func() (*T, int64)) *T {
	if p := slot.Load(); p != nil || c.dictRefused.Load() {
		return p
	}
	c.planesMu.Lock()
	defer c.planesMu.Unlock()
	if p := slot.Load(); p != nil || c.dictRefused.Load() {
		return p
	}
	if e.snap.planeSets.Add(sets) > maxPlaneSets {
		e.snap.planeSets.Add(-sets)
		c.dictRefused.Store(true)
		return nil
	}
	p, bytes := build()
	e.snap.planeBytes.Add(bytes)
	slot.Store(p)
	return p
}

// dictLeaf answers a condition from the column's dictionary planes or code
// slices: its true rows, before negation (falseRows completes them); ok
// is false when the column has neither.
func (e *snapEval) dictLeaf(c *snapColumn, set codeSet, p ir.Pred) (t bitset, ok bool) {
	if c.codes16 != nil {
		return e.slicesLeaf(c, p)
	}
	passes := statementRanges(p)
	if set.lut != nil || len(set.ranges) > passes {
		return nil, false
	}
	planes := e.dictPlanesFor(c)
	if planes == nil {
		return nil, false
	}
	t = e.newDirtySet()
	for i := range passes {
		var lo, hi uint32 // an empty range past the held ones
		if i < len(set.ranges) {
			lo, hi = set.ranges[i].lo, set.ranges[i].hi
		}
		if i == 0 {
			andNot(t, planes.less[hi], planes.less[lo])
		} else {
			orAndNot(t, planes.less[hi], planes.less[lo])
		}
	}
	e.work.planePasses += passes
	return t, true
}

// statementRanges is how many code ranges a condition of p's kind can
// have, read from the statement alone: LIKE's codes are not ranges.
func statementRanges(p ir.Pred) int {
	switch p := p.(type) {
	case *ir.Compare:
		if p.Op == "<>" || p.Op == "!=" {
			return 2
		}
		return 1
	case *ir.Between:
		return 1
	case *ir.In:
		return len(p.Values)
	}
	return 0
}

// slicesLeaf answers a comparison, BETWEEN or IN from the column's code
// slices: the kernel and its thresholds follow the kind of condition, the
// codes its literals' places in the dictionary. A <> is answered as its
// = and reads complemented: its codes are all but one value's.
func (e *snapEval) slicesLeaf(c *snapColumn, p ir.Pred) (t bitset, ok bool) {
	column, lits, _ := planeLiterals(p)
	if column == "" || len(lits) == 0 {
		return nil, false
	}
	var at [8]codeRange
	codes := at[:0]
	for _, l := range lits {
		v, ok := literalFor(c, l)
		if !ok {
			return nil, false
		}
		codes = append(codes, codeRange{c.lowerBound(v), c.upperBound(v)})
	}
	slices := e.codeSlicesFor(c)
	if slices == nil {
		return nil, false
	}
	t = e.newDirtySet()
	run := func(kernel rankKernel, a, b uint32, held, add bool) {
		mode := fillSet
		if add {
			mode = fillOr
		}
		slices.run(t, kernel, a, b, held, mode)
		e.work.rankReads += slices.bits * kernel.thresholds()
	}
	switch p := p.(type) {
	case *ir.Compare:
		r := codes[0]
		switch p.Op {
		case "=":
			run(rankEqual, r.lo, 0, r.hi > r.lo, false)
		case "<>", "!=":
			run(rankFrom, r.hi, 0, true, false) // the values above, then those below
			run(rankBelow, r.lo, 0, true, true)
		case "<":
			run(rankBelow, r.lo, 0, true, false)
		case "<=":
			run(rankBelow, r.hi, 0, true, false)
		case ">":
			run(rankFrom, r.hi, 0, true, false)
		case ">=":
			run(rankFrom, r.lo, 0, true, false)
		default:
			return nil, false
		}
	case *ir.Between:
		run(rankBetween, codes[0].lo, codes[1].hi, true, false)
	case *ir.In:
		for i, r := range codes {
			run(rankEqual, r.lo, 0, r.hi > r.lo, i > 0)
		}
	}
	return t, true
}
