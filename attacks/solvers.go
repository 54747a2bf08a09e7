package attacks

// SolveSubsetSums is linear-reconstruction's least-squares solver for
// offline use (`countwall audit risk`): the per-value counts, each within
// [0, caps[i]], whose sums over the subsets best match the answers.
func SolveSubsetSums(subs [][]bool, answers []float64, caps []int) ([]float64, error) {
	return solveLeastSquares(subs, answers, caps)
}
