package risk

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// The mathematics the attacks and the solvers share: the attack asks and
// solves, the solver reads the audit and solves the same way, so that
// what `audit risk` finds is what the attack would have found.

// SolveSubsetSums is linear reconstruction's least-squares solver: the
// per-value counts, each within [0, caps[i]], whose sums over the subsets
// (subs[j][i]: value i is in subset j) best match the answers. It
// minimises ||A x - a||_2 (the minimum-norm solution when there are fewer
// answers than values), then clamps x to [0, caps].
func SolveSubsetSums(subs [][]bool, answers []float64, caps []int) ([]float64, error) {
	lo, hi := make([]float64, len(caps)), make([]float64, len(caps))
	for i, c := range caps {
		hi[i] = float64(c)
	}
	return SolveBoundedSums(subs, answers, lo, hi)
}

// SolveBoundedSums is SolveSubsetSums with real-valued unknowns, each
// within [lo[i], hi[i]]: the per-value sums of a numeric secret (a value
// shared by c people, each with a value in [min, max], sums to within
// [c min, c max]).
func SolveBoundedSums(subs [][]bool, answers []float64, lo, hi []float64) ([]float64, error) {
	m, n := len(subs), len(hi)
	A := mat.NewDense(m, n, nil)
	for j, s := range subs {
		for i, in := range s {
			if in {
				A.Set(j, i, 1)
			}
		}
	}
	var x mat.VecDense
	if err := x.SolveVec(A, mat.NewVecDense(m, append([]float64(nil), answers...))); err != nil {
		var cond mat.Condition
		if !errors.As(err, &cond) {
			return nil, fmt.Errorf("solving least squares: %w", err)
		}
		// Ill-conditioned (few answers): the solution is still the best
		// the answers allow.
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Max(lo[i], math.Min(hi[i], x.AtVec(i)))
	}
	return out, nil
}

// NoiseBound is the perturbation finder's estimate of the noise's range D
// from the z of its triples (z = M(b,a1) + M(b,a2) - M(b), the sum of
// three noise terms): their least and greatest value and absolute value,
// over triples cells. The note says how the guess was drawn.
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
