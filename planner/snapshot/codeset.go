package snapshot

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strconv"

	"countwall/ir"
)

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

// oneRun is the set's codes when they are one run lo..hi-1.
func (s codeSet) oneRun() (codeRange, bool) {
	if s.lut == nil && len(s.ranges) == 1 {
		return s.ranges[0], true
	}
	return codeRange{}, false
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

// lowerBound is the first code whose value is >= v; upperBound the first > v.
func (c *snapColumn) lowerBound(v dictValue) uint32 {
	i, _ := slices.BinarySearchFunc(c.values, v, compareDict)
	return uint32(i)
}

func (c *snapColumn) upperBound(v dictValue) uint32 {
	return uint32(sort.Search(len(c.values), func(i int) bool { return compareDict(c.values[i], v) > 0 }))
}

// others is the set of non-NULL codes not in set.
func (c *snapColumn) others(set codeSet) codeSet {
	nn, n := c.firstNonNull(), uint32(len(c.values))
	if set.lut != nil {
		lut := make([]uint64, n)
		for code := nn; code < n; code++ {
			lut[code] = 1 - set.lut[code]
		}
		return codeSet{lut: lut}
	}
	var out []codeRange
	next := nn
	for _, r := range set.ranges {
		if r.lo > next {
			out = append(out, codeRange{next, r.lo})
		}
		next = max(next, r.hi)
	}
	if next < n {
		out = append(out, codeRange{next, n})
	}
	return codeSet{ranges: out}
}

// rowsIn is how many rows hold a code of the set (NULL rows never do).
func (c *snapColumn) rowsIn(set codeSet) int64 {
	var n int64
	set.eachRun(func(lo, hi uint32) { n += int64(c.prefix[hi] - c.prefix[lo]) })
	return n
}
