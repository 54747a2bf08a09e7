package dataset

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// rng draws the generators' random values. It wraps PCG, whose output
// sequence is fixed by its specification, and derives every value with its
// own arithmetic instead of math/rand/v2's helpers, whose algorithms a future
// Go release may change: a seed must name the same table for good.
type rng struct {
	src      *rand.PCG
	spare    float64 // second Box-Muller value, valid when hasSpare
	hasSpare bool
}

// newRNG seeds a generator; stream separates independent generators that
// share a user seed (the people and synthetic tables, for example).
func newRNG(seed, stream uint64) *rng {
	return &rng{src: rand.NewPCG(seed, stream)}
}

// uint64n returns a value in [0, n) for n > 0 by Lemire's multiply-high
// method. The bias, at most n/2^64, is far below anything a table of any
// practical size could show.
func (r *rng) uint64n(n uint64) uint64 {
	hi, _ := bits.Mul64(r.src.Uint64(), n)
	return hi
}

// float64 returns a value in [0, 1) with 53 random bits.
func (r *rng) float64() float64 {
	return float64(r.src.Uint64()>>11) * 0x1p-53
}

// chance is true with probability p.
func (r *rng) chance(p float64) bool { return r.float64() < p }

// normal returns a standard normal value by the Box-Muller transform.
func (r *rng) normal() float64 {
	if r.hasSpare {
		r.hasSpare = false
		return r.spare
	}
	u1 := 1 - r.float64() // (0, 1]: keeps the logarithm finite
	u2 := r.float64()
	radius := math.Sqrt(-2 * math.Log(u1))
	angle := 2 * math.Pi * u2
	r.spare = radius * math.Sin(angle)
	r.hasSpare = true
	return radius * math.Cos(angle)
}

// weighted is a categorical distribution over indexes 0..len-1 with integer
// weights, so that drawing from it involves no floating point at all.
type weighted struct {
	cumulative []uint64
}

func newWeighted(weights ...uint64) weighted {
	w := weighted{cumulative: make([]uint64, len(weights))}
	var sum uint64
	for i, x := range weights {
		sum += x
		w.cumulative[i] = sum
	}
	return w
}

// draw returns an index with probability proportional to its weight.
func (w weighted) draw(r *rng) int {
	x := r.uint64n(w.cumulative[len(w.cumulative)-1])
	lo, hi := 0, len(w.cumulative)-1
	for lo < hi { // first index whose cumulative weight exceeds x
		mid := (lo + hi) / 2
		if w.cumulative[mid] > x {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// clampRound rounds x to the nearest integer (halves away from zero) and
// clamps it to [lo, hi].
func clampRound(x float64, lo, hi int64) int64 {
	v := math.Round(x)
	if v < float64(lo) {
		return lo
	}
	if v > float64(hi) {
		return hi
	}
	return int64(v)
}
