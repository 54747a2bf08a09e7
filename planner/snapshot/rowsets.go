package snapshot

import (
	"slices"
)

// Row sets kept beside a column's codes, so that a condition costs a few
// word operations per 64 rows rather than a bit set per matching row:
//
//   - each frequent value's rows (one row in denseShare or more). Its set
//     (a bit a row) takes no more memory than its row list (32 bits a listed
//     row), so at most denseShare values of a column have one;
//   - the rows below each of up to cutBins cuts of the dictionary, chosen
//     so that about as many rows lie between two cuts. A run of codes (every
//     comparison and BETWEEN) is then the rows below the cut nearest its end
//     less those below the cut nearest its start, corrected by the rows
//     listed between each cut and the run's own end: at most half a bin
//     each. They cost cutBins bits a row, and are kept only where some
//     value is not frequent (else the values' own sets do as well).
const (
	denseShare = 32
	cutBins    = 16
)

// indexRows builds the column's row sets for a table of rows rows.
func (c *snapColumn) indexRows(rows int) {
	c.denseCodes, c.denseRows, c.cutCodes, c.cutRows = nil, nil, nil, nil
	if rows == 0 {
		return
	}
	sparse := false
	for code := range c.values {
		if c.values[code].class == classNull {
			continue // no condition holds on NULL: the NULL set serves
		}
		lo, hi := c.prefix[code], c.prefix[code+1]
		if int64(hi-lo)*denseShare < int64(rows) {
			sparse = true
			continue
		}
		set := newBitset(rows)
		c.setListed(set, uint32(code), uint32(code)+1)
		c.denseCodes = append(c.denseCodes, uint32(code))
		c.denseRows = append(c.denseRows, set)
	}
	if sparse {
		c.cutDictionary(rows)
	}
}

// cutDictionary chooses the cuts and builds the rows below each. The first
// cut is the first non-NULL code (no rows below it) and the last the
// dictionary's end (every non-NULL row).
func (c *snapColumn) cutDictionary(rows int) {
	nn, n := c.firstNonNull(), uint32(len(c.values))
	nonNull := c.prefix[n] - c.prefix[nn]
	c.cutCodes = []uint32{nn}
	for bin := int32(1); bin < cutBins; bin++ {
		// The first code with at least bin/cutBins of the non-NULL rows
		// below it.
		want := c.prefix[nn] + int32(int64(nonNull)*int64(bin)/cutBins)
		code, _ := slices.BinarySearch(c.prefix[nn:n+1], want)
		if cut := nn + uint32(code); cut > c.cutCodes[len(c.cutCodes)-1] && cut < n {
			c.cutCodes = append(c.cutCodes, cut)
		}
	}
	c.cutCodes = append(c.cutCodes, n)
	c.cutRows = make([]bitset, len(c.cutCodes))
	below := newBitset(rows)
	for j := 1; j < len(c.cutCodes); j++ {
		below = slices.Clone(below)
		c.setListed(below, c.cutCodes[j-1], c.cutCodes[j])
		c.cutRows[j] = below
	}
}

// setListed sets in t the rows listed under codes lo..hi-1.
func (c *snapColumn) setListed(t bitset, lo, hi uint32) {
	for _, r := range c.rowsByCode[c.prefix[lo]:c.prefix[hi]] {
		t.set(int(r))
	}
}

// listing is how fillListed sets a code set's rows: for a set of one run
// (a comparison, BETWEEN), through cuts a and b when that is less work;
// else run by run. The cuts' corrections take rows away, so only there.
type listing struct {
	cut  bool
	a, b int
}

// planListing is fillListed's estimated work for a set, in leafWay's units,
// and the listing that does it.
func (c *snapColumn) planListing(set codeSet, words int64) (int64, listing) {
	var work int64
	set.eachRun(func(lo, hi uint32) { work += c.runWork(lo, hi, words) })
	if r, ok := set.oneRun(); ok {
		if cut, a, b, fits := c.cutWork(r.lo, r.hi, words); fits && (LeafWay == WayCuts || cut < work) {
			return cut, listing{cut: true, a: a, b: b}
		}
	}
	return work, listing{}
}

// fillListed sets in t, empty, the rows holding a code of set, as l says.
func (c *snapColumn) fillListed(t bitset, set codeSet, l listing) {
	if r, ok := set.oneRun(); ok && l.cut {
		c.fillCut(t, r.lo, r.hi, l.a, l.b)
		return
	}
	set.eachRun(func(lo, hi uint32) { c.fillRun(t, lo, hi, true) })
}

// runWork is the work of fillRun on codes lo..hi-1: a pass over the set of
// each frequent value among them, a bit set for each other row.
func (c *snapColumn) runWork(lo, hi uint32, words int64) int64 {
	rows := int64(c.prefix[hi] - c.prefix[lo])
	var work int64
	d, _ := slices.BinarySearch(c.denseCodes, lo)
	for ; d < len(c.denseCodes) && c.denseCodes[d] < hi; d++ {
		code := c.denseCodes[d]
		rows -= int64(c.prefix[code+1] - c.prefix[code])
		work += costWord * words
	}
	return work + costListedRow*rows
}

// fillRun sets (add) or clears (!add) in t the rows holding codes lo..hi-1:
// the frequent values' sets a word at a time, the others' listed rows one
// by one.
func (c *snapColumn) fillRun(t bitset, lo, hi uint32, add bool) {
	d, _ := slices.BinarySearch(c.denseCodes, lo)
	for lo < hi {
		end := hi
		if d < len(c.denseCodes) && c.denseCodes[d] < hi {
			end = c.denseCodes[d]
		}
		for _, r := range c.rowsByCode[c.prefix[lo]:c.prefix[end]] {
			if add {
				t.set(int(r))
			} else {
				t.clear(int(r))
			}
		}
		if end < hi { // end is a frequent value's code
			for i, w := range c.denseRows[d] {
				if add {
					t[i] |= w
				} else {
					t[i] &^= w
				}
			}
			d++
			end++
		}
		lo = end
	}
}

// cutWork is the work of fillCut for codes lo..hi-1 from the cuts a and b
// (indexes into cutCodes) nearest its ends; fits is false when the column
// has no cuts or the nearest do not fit.
func (c *snapColumn) cutWork(lo, hi uint32, words int64) (work int64, a, b int, fits bool) {
	if len(c.cutCodes) == 0 {
		return 0, 0, 0, false
	}
	a, b = c.nearestCut(lo), c.nearestCut(hi)
	// The corrections must lie at the run's edges: cut a at most hi and b
	// at least lo, a before b.
	if c.cutCodes[a] > hi || c.cutCodes[b] < lo || a >= b {
		return 0, 0, 0, false
	}
	edge := func(x, y uint32) int64 { return c.runWork(min(x, y), max(x, y), words) }
	return 3*costWord*words + edge(c.cutCodes[a], lo) + edge(c.cutCodes[b], hi), a, b, true
}

// nearestCut is the index of the cut with the fewest rows between it and
// code.
func (c *snapColumn) nearestCut(code uint32) int {
	j, _ := slices.BinarySearch(c.cutCodes, code)
	if j == len(c.cutCodes) {
		return j - 1
	}
	if j > 0 && c.prefix[code]-c.prefix[c.cutCodes[j-1]] < c.prefix[c.cutCodes[j]]-c.prefix[code] {
		return j - 1
	}
	return j
}

// fillCut sets in t the rows holding codes lo..hi-1: those below cut b and
// not below cut a, with the codes between each cut and the run's end added
// or taken away. Those edges lie outside the run and inside the cuts' span
// or the other way round, so adding and taking away do not meet.
func (c *snapColumn) fillCut(t bitset, lo, hi uint32, a, b int) {
	ca, cb := c.cutCodes[a], c.cutCodes[b]
	belowA, belowB := c.cutRows[a], c.cutRows[b]
	if belowA == nil { // cut a is the first: no rows below it
		for i, w := range belowB {
			t[i] |= w
		}
	} else {
		for i, w := range belowB {
			t[i] |= w &^ belowA[i]
		}
	}
	switch {
	case ca < lo:
		c.fillRun(t, ca, lo, false)
	case lo < ca:
		c.fillRun(t, lo, ca, true)
	}
	switch {
	case cb < hi:
		c.fillRun(t, cb, hi, true)
	case hi < cb:
		c.fillRun(t, hi, cb, false)
	}
}
