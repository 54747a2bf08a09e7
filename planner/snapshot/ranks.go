package snapshot

import (
	"math/bits"
	"sort"

	"countwall/ir"
)

// Ranks over wide declared domains, for the oblivious evaluation. A domain
// of more than maxPlaneDomain values (an income range of 500,001) would
// need a plane a value; instead each row's rank on the domain's line is
// kept bit-sliced. The line has 2K+1 places for a domain of K values: the
// gap below the first value, the first value, the gap after it, and so on,
// so that a stored value between two domain values, or outside them, has
// its place too. rank(v) = 2*(the domain values below v) + (1 if v is one).
// Bit j of 64 rows' ranks is one word, and a row's comparison with a rank
// read from a statement's literal is a few word operations a bit, the same
// for every row: rows/64 words times bitsFor(K) a condition, whatever the
// rows hold. The number of bits follows the domain's size, which the
// config declares.

// maxRankDomain is the largest declared domain given ranks: 24 bits of
// rank. Reading a domain's values in order costs a lookup a value when the
// planes are built.
const maxRankDomain = 1 << 22

// maxSortedDomain is the largest domain whose values, as the column reads
// them, are sorted in memory when they do not come in SQLite's order
// already (categories listed in output order, integers read as text): 48
// bytes a value while the ranks are built.
const maxSortedDomain = 1 << 18

// domainOrder is a domain's values as a column reads them, in SQLite's
// order, each once: index i is read from the domain itself when its values
// come in that order (an integer range on a numeric column), else from
// values, sorted once.
type domainOrder struct {
	c      *snapColumn
	d      *ir.Domain
	values []dictValue // sorted, when the domain's own order is not SQLite's
	sorted bool
	n      int
}

func newDomainOrder(c *snapColumn, d *ir.Domain) (domainOrder, bool) {
	n := int(d.Size())
	o := domainOrder{c: c, d: d, n: n}
	inOrder := true
	var prev dictValue
	for i := range n {
		v, ok := literalFor(c, domainLiteral(d, i))
		if !ok || (i > 0 && compareDict(prev, v) >= 0) {
			inOrder = false
			break
		}
		prev = v
	}
	if inOrder {
		return o, true
	}
	if n > maxSortedDomain {
		return domainOrder{}, false
	}
	o.values, o.sorted = sortedDomainValues(c, d), true
	o.n = len(o.values)
	return o, true
}

// domainLiteral is the domain's i-th value as a statement's literal.
func domainLiteral(d *ir.Domain, i int) ir.Literal {
	if d.IsRange {
		return ir.Literal{Kind: ir.LitInt, Int: d.Min + int64(i)}
	}
	return ir.Literal{Kind: ir.LitText, Text: d.Categories[i]}
}

func (o domainOrder) at(i int) dictValue {
	if o.sorted {
		return o.values[i]
	}
	v, _ := literalFor(o.c, domainLiteral(o.d, i))
	return v
}

// below is how many of the domain's values sort below v.
func (o domainOrder) below(v dictValue) int {
	return sort.Search(o.n, func(i int) bool { return compareDict(o.at(i), v) >= 0 })
}

func (o domainOrder) index(v dictValue) (int, bool) {
	if !o.sorted && o.d.IsRange && v.class == classInt {
		// The domain's i-th value is the integer Min+i: a literal's place
		// is arithmetic, not a search of a million values.
		if v.i < o.d.Min {
			return 0, false
		}
		// v.i >= Min, so the difference is exact as a uint64.
		if i := uint64(v.i) - uint64(o.d.Min); i < uint64(o.n) {
			return int(i), true
		}
		return o.n, false
	}
	i := o.below(v)
	return i, i < o.n && compareDict(o.at(i), v) == 0
}

// rankBits is the bits of a rank on the line of a domain of n values.
func rankBits(n int) int { return max(1, bits.Len(uint(2*n))) }

// domainRanks are one column's rows' ranks on its declared domain's line,
// bit-sliced: bit j of the ranks of rows 64w..64w+63 is
// slices[j*words+w], a plane a bit.
type domainRanks struct {
	order   domainOrder
	bits    int
	slices  []uint64
	nonNull bitset
}

// buildRanks ranks the dictionary's values (a search each) and slices
// every row's rank (one row pass); nil when the domain is too wide to put
// in order.
func buildRanks(c *snapColumn, d *ir.Domain, all bitset) *domainRanks {
	if d.Size() > maxRankDomain {
		return nil
	}
	order, ok := newDomainOrder(c, d)
	if !ok {
		return nil
	}
	r := &domainRanks{order: order, bits: rankBits(order.n), nonNull: newBitset(c.rows())}
	rankOf := make([]uint32, len(c.values))
	for code := int(c.firstNonNull()); code < len(c.values); code++ {
		i, in := order.index(c.values[code])
		rankOf[code] = uint32(2*i) + uint32(b2u(in))
	}
	r.slice(c, rankOf, all)
	return r
}

// slice sets each row's rank, rankOf its code, in the planes (one row
// pass), and the non-NULL rows.
func (r *domainRanks) slice(c *snapColumn, rankOf []uint32, all bitset) {
	words := len(r.nonNull)
	r.slices = make([]uint64, words*r.bits)
	// Every bit of every rank is written, set or not, so that the build's
	// time follows the rows and the bits, not the ranks the rows hold.
	for row := range c.rows() {
		rank, shift, w := uint64(rankOf[c.code(row)]), uint(row)&63, row>>6
		for j := range r.bits {
			r.slices[j*words+w] |= (rank >> j & 1) << shift
		}
	}
	for i := range r.nonNull {
		r.nonNull[i] = all[i] &^ c.nulls[i]
	}
}

func (r *domainRanks) size() int                     { return r.order.n }
func (r *domainRanks) index(v dictValue) (int, bool) { return r.order.index(v) }
func (r *domainRanks) memory() int64                 { return 8 * int64(len(r.slices)+len(r.nonNull)) }

func (r *domainRanks) work(lo, hi int) (passes, reads int) {
	kernel, _, _ := r.kernel(lo, hi)
	return 0, r.bits * kernel.thresholds()
}

// rankKernel is how a fill compares every row's rank: with one rank, below
// one, from one up, or between two.
type rankKernel int

const (
	rankNone rankKernel = iota
	rankEqual
	rankBelow
	rankFrom
	rankBetween
)

// thresholds is how many ranks the kernel compares every row's with.
func (k rankKernel) thresholds() int {
	switch k {
	case rankNone:
		return 0
	case rankBetween:
		return 2
	}
	return 1
}

// kernel is the comparison that fills [lo, hi), which the statement's
// literals and the domain set.
func (r *domainRanks) kernel(lo, hi int) (k rankKernel, a, b uint32) {
	end := 2*r.order.n + 1
	lo, hi = max(lo, 0), min(hi, end)
	switch {
	case hi <= lo:
		return rankNone, 0, 0
	case hi == lo+1:
		return rankEqual, uint32(lo), 0
	case lo == 0:
		return rankBelow, uint32(hi), 0
	case hi == end:
		return rankFrom, uint32(lo), 0
	}
	return rankBetween, uint32(lo), uint32(hi)
}

// rankBlock is the words of rows a fill computes at once: its scratch
// stays in the first-level cache while every plane is read.
const rankBlock = 256

// fill writes into t, as mode says, the non-NULL rows whose rank is in
// [lo, hi).
func (r *domainRanks) fill(t bitset, lo, hi int, mode fillMode) {
	kernel, a, b := r.kernel(lo, hi)
	r.run(t, kernel, a, b, true, mode)
}

// run writes into t, as mode says, the non-NULL rows the kernel keeps:
// rank a, below a, from a up, or from a up and below b. held false keeps
// none, after the same work.
func (r *domainRanks) run(t bitset, kernel rankKernel, a, b uint32, held bool, mode fillMode) {
	var first, second [rankBlock]uint64
	mask := -b2u(held)
	// atLeast gives the rows from a rank up; "below" is its complement,
	// taken in the pass that masks.
	invert := -b2u(kernel == rankBelow)
	for from := 0; from < len(t); from += rankBlock {
		to := min(from+rankBlock, len(t))
		in, other := first[:to-from], second[:to-from]
		switch kernel {
		case rankNone:
			clear(in)
		case rankEqual:
			r.equal(in, other, from, a)
		case rankBelow, rankFrom:
			r.atLeast(in, from, a)
		case rankBetween:
			r.atLeast(in, from, a)
			r.atLeast(other, from, b)
			for w := range in {
				in[w] &^= other[w]
			}
		}
		tb, nonNull := t[from:to], r.nonNull[from:to]
		for w := range in {
			in[w] = (in[w] ^ invert) & nonNull[w] & mask
		}
		switch mode {
		case fillSet:
			copy(tb, in)
		case fillOr:
			for w := range tb {
				tb[w] |= in[w]
			}
		case fillAnd:
			for w := range tb {
				tb[w] &= in[w]
			}
		}
	}
}

// atLeast sets out to the rows of words from.. whose rank is k or more.
// From the low bit up, out holds whether the rank's low bits are at least
// k's: where the rank's bit differs from k's, the rank's decides; where
// they agree, the bits below do. So a plane where k's bit is 1 is ANDed
// in, one where it is 0 ORed: an operation a word, where the rank's own
// "below" would need a complement too.
func (r *domainRanks) atLeast(out []uint64, from int, k uint32) {
	words := len(r.nonNull)
	for w := range out {
		out[w] = ^uint64(0) // every rank is at least the empty low bits
	}
	for j := range r.bits {
		plane := r.slices[j*words+from:][:len(out)]
		if k>>j&1 == 1 {
			for w := range out {
				out[w] &= plane[w]
			}
		} else {
			for w := range out {
				out[w] |= plane[w]
			}
		}
	}
}

// equal sets out to the rows of words from.. whose rank is k: every plane
// where k's bit is 1 holds the row (ANDed into out), and none where it is
// 0 does (ORed into spare, taken away at the end).
func (r *domainRanks) equal(out, spare []uint64, from int, k uint32) {
	words := len(r.nonNull)
	spare = spare[:len(out)]
	for w := range out {
		out[w], spare[w] = ^uint64(0), 0
	}
	for j := range r.bits {
		plane := r.slices[j*words+from:][:len(out)]
		if k>>j&1 == 1 {
			for w := range out {
				out[w] &= plane[w]
			}
		} else {
			for w := range out {
				spare[w] |= plane[w]
			}
		}
	}
	for w := range out {
		out[w] &^= spare[w]
	}
}
