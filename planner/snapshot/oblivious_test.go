package snapshot

import (
	"math/rand/v2"
	"testing"
)

// TestObliviousKernelsAgreeWithCodes holds the word-at-a-time kernels to
// the plain reading of each row's code, for every code width, table lengths
// that end mid-word, and ranges and sets at the dictionary's edges: 3 widths
// x 7 lengths x 40 seeded ranges and sets.
func TestObliviousKernelsAgreeWithCodes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 31))
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 4097} {
		const values = 300
		codes := make([]uint32, n)
		for i := range codes {
			codes[i] = uint32(r.IntN(values))
		}
		c16, c8 := make([]uint16, n), make([]uint8, n)
		for i, c := range codes {
			c16[i], c8[i] = uint16(c), uint8(c)
		}
		for range 40 {
			lo := uint32(r.IntN(values + 1))
			hi := lo + uint32(r.IntN(values+1-int(lo)))
			set := ranges(codeRange{lo, hi}, codeRange{uint32(r.IntN(values)), uint32(r.IntN(values))})
			member := codeBits(set, values)
			check := func(name string, got bitset, want func(code uint32) bool, codes []uint32) {
				t.Helper()
				for i, c := range codes {
					if got.has(i) != want(c) {
						t.Fatalf("%s n=%d row %d code %d: got %v", name, n, i, c, got.has(i))
					}
				}
				for i := len(codes); i < 64*len(got); i++ {
					if got.has(i) {
						t.Fatalf("%s n=%d: bit %d past the last row is set", name, n, i)
					}
				}
			}
			inRange := func(c uint32) bool { return lo <= c && c < hi }
			got := newBitset(n)
			rangeBits(got, codes, lo, hi)
			check("range32", got, inRange, codes)
			rangeBits(got, c16, lo, hi)
			check("range16", got, inRange, codes)
			memberBits(got, codes, member)
			check("member32", got, set.has, codes)
			memberBits(got, c16, member)
			check("member16", got, set.has, codes)
			// Eight-bit codes hold a dictionary of at most 256 values.
			small := make([]uint32, n)
			for i, c := range c8 {
				small[i] = uint32(c)
			}
			rangeBits(got, c8, lo, hi)
			check("range8", got, inRange, small)
			rangeBits8(got, c8, lo, hi)
			check("lanes8", got, inRange, small)
			memberBits(got, c8, member)
			check("member8", got, set.has, small)
		}
	}
}

// TestRangeBits8EveryRange holds the eight-rows-at-a-time kernel to the
// plain reading for every range of an 8-bit dictionary, lo <= hi <= 256,
// over codes holding every value 0..255 and a table that ends mid-word.
func TestRangeBits8EveryRange(t *testing.T) {
	codes := make([]uint8, 3*256+8)
	for i := range codes {
		codes[i] = uint8(i * 7)
	}
	got := newBitset(len(codes))
	for lo := uint32(0); lo <= 256; lo++ {
		for hi := lo; hi <= 256; hi++ {
			rangeBits8(got, codes, lo, hi)
			for i, c := range codes {
				if want := lo <= uint32(c) && uint32(c) < hi; got.has(i) != want {
					t.Fatalf("[%d, %d) row %d code %d: got %v", lo, hi, i, c, got.has(i))
				}
			}
		}
	}
}
