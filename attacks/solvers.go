package attacks

import (
	"fmt"
	"math"
)

// SolveSubsetSums is linear-reconstruction's least-squares solver for
// offline use (`countwall audit risk`): the per-value counts, each within
// [0, caps[i]], whose sums over the subsets best match the answers.
func SolveSubsetSums(subs [][]bool, answers []float64, caps []int) ([]float64, error) {
	return solveLeastSquares(subs, answers, caps)
}

// NoiseBound is the perturbation finder's estimate of D from the z of its
// triples (z = M(b,a1) + M(b,a2) - M(b), the sum of three noise terms):
// their least and greatest value and absolute value, over triples cells.
// It is shared with `countwall audit risk`, which reads the z from the
// audit.
func NoiseBound(zMin, zMax, absMin, absMax float64, triples int) (float64, string) {
	guess := math.Max(math.Ceil(-zMin/3), math.Ceil(zMax/3))
	note := fmt.Sprintf("z ranged over [%g, %g]; Algorithm 3 guesses D = %g", zMin, zMax, guess)
	// With the ABS cell key the key of b is the sum of its halves' keys,
	// so the three noise terms are dependent: under the uniform table z is
	// always ±D or ±(D+1). Seen over several triples, |z| confined to
	// {a, a+1} with a >= 1 gives D = a; independent noise (the paper's
	// model) spreads |z| from 0 upward and leaves Algorithm 3's guess.
	if triples >= 5 && absMin >= 1 && absMax-absMin <= 1 {
		guess = absMin
		note += fmt.Sprintf("; |z| stayed in {%g, %g}: additive cell keys, so D = %g", absMin, absMax, absMin)
	}
	return guess, note
}
