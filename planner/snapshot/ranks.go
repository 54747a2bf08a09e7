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
	words := len(r.nonNull)
	r.slices = make([]uint64, words*r.bits)
	for row := range c.rows() {
		bit := uint64(1) << (uint(row) & 63)
		for rank := rankOf[c.code(row)]; rank != 0; rank &= rank - 1 {
			r.slices[bits.TrailingZeros32(rank)*words+row>>6] |= bit
		}
	}
	for i := range r.nonNull {
		r.nonNull[i] = all[i] &^ c.nulls[i]
	}
	return r
}

func (r *domainRanks) size() int                           { return r.order.n }
func (r *domainRanks) index(v dictValue) (int, bool)       { return r.order.index(v) }
func (r *domainRanks) memory() int64                       { return 8 * int64(len(r.slices)+len(r.nonNull)) }
func (r *domainRanks) work(lo, hi int) (passes, reads int) { return 0, r.bits * r.thresholds(lo, hi) }

// thresholds is how many ranks a fill of [lo, hi) compares every row's with.
func (r *domainRanks) thresholds(lo, hi int) int {
	if lo > 0 && hi <= 2*r.order.n && hi != lo+1 {
		return 2
	}
	return 1
}

// rankBlock is the words of rows a fill computes at once: its scratch
// stays in the first-level cache while every plane is read.
const rankBlock = 256

// fill sets t (adds to t, when add) the non-NULL rows whose rank is in
// [lo, hi). The kernel follows lo and hi, which the statement's literals
// and the domain set: one rank, below one, from one up, or between two.
func (r *domainRanks) fill(t bitset, lo, hi int, add bool) {
	end := 2*r.order.n + 1
	lo, hi = max(lo, 0), min(hi, end)
	var a, b [rankBlock]uint64
	for from := 0; from < len(t); from += rankBlock {
		to := min(from+rankBlock, len(t))
		in, other := a[:to-from], b[:to-from]
		switch {
		case hi <= lo:
			clear(in)
		case hi == lo+1:
			r.equal(in, from, uint32(lo))
		case lo == 0:
			r.less(in, from, uint32(hi))
		case hi == end:
			r.less(in, from, uint32(lo))
			for w := range in {
				in[w] = ^in[w]
			}
		default:
			r.less(in, from, uint32(hi))
			r.less(other, from, uint32(lo))
			for w := range in {
				in[w] &^= other[w]
			}
		}
		tb, nonNull := t[from:to], r.nonNull[from:to]
		keep := -b2u(add)
		for w := range tb {
			tb[w] = tb[w]&keep | in[w]&nonNull[w]
		}
	}
}

// less sets out to the rows of words from.. whose rank is below k. From the
// low bit up, out holds whether the rank's low bits are below k's: where
// the rank's bit differs from k's, k's bit decides; where they agree, the
// bits below do.
func (r *domainRanks) less(out []uint64, from int, k uint32) {
	words := len(r.nonNull)
	clear(out)
	for j := range r.bits {
		plane := r.slices[j*words+from:][:len(out)]
		if k>>j&1 == 1 {
			for w := range out {
				out[w] |= ^plane[w]
			}
		} else {
			for w := range out {
				out[w] &^= plane[w]
			}
		}
	}
}

// equal sets out to the rows of words from.. whose rank is k: every bit
// agrees.
func (r *domainRanks) equal(out []uint64, from int, k uint32) {
	words := len(r.nonNull)
	for w := range out {
		out[w] = ^uint64(0)
	}
	for j := range r.bits {
		plane := r.slices[j*words+from:][:len(out)]
		if k>>j&1 == 1 {
			for w := range out {
				out[w] &= plane[w]
			}
		} else {
			for w := range out {
				out[w] &^= plane[w]
			}
		}
	}
}
