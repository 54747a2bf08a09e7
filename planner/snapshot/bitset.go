package snapshot

import (
	"math"
	"math/bits"
	"sync"
)

// Row sets, a bit a row, and the pooled storage a query takes its sets and
// counters from.

// bitset is a set of row numbers.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }

// clear removes row i from the set.
func (b bitset) clear(i int) { b[i>>6] &^= 1 << (uint(i) & 63) }

func (b bitset) count() (n int64) {
	for _, w := range b {
		n += int64(bits.OnesCount64(w))
	}
	return n
}

// each calls f for every row in the set, in ascending order.
func (b bitset) each(f func(row int)) {
	for wi, w := range b {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			f(wi<<6 | t)
			w &= w - 1
		}
	}
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

// lastWordMask keeps the bits of the last word that stand for rows.
func lastWordMask(rows int) uint64 {
	if r := rows & 63; r != 0 {
		return 1<<uint(r) - 1
	}
	return ^uint64(0)
}

// b2u is 1 for true and 0 for false.
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// scratch is a pool of per-query slices, handed out with n elements of
// whatever the last user left in them.
type scratch[T any] struct{ pool sync.Pool }

func (s *scratch[T]) take(n int) *[]T {
	if p, ok := s.pool.Get().(*[]T); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	out := make([]T, n)
	return &out
}

func (s *scratch[T]) put(p *[]T) { s.pool.Put(p) }

var (
	counterScratch scratch[int64]  // a counter per word
	wordScratch    scratch[uint64] // a word per 64 rows
)
