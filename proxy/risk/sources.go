package risk

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"countwall/proxy/state/release"
)

// A release made public before, by another firewall or by the owner (an
// exact table of pair counts, say), is known to every analyst: Kifer and
// Machanavajjhala's prior-release attack combines it with one firewall's
// noisy answers. Assess adds the published answers to each analyst's own,
// with ids of their own kind (publishedID), and keeps a finding only when
// it rests on at least one answer of the analyst's.

// publishedID is the answer id of a published release's audit row id:
// below zero, so that no own row's id meets it.
func publishedID(id int64) int64 { return -id - 1 }

// publishedAnswers are the published releases' cells as answers.
func publishedAnswers(rs []release.Release) []answer {
	as := answers(rs)
	for i := range as {
		as[i].id = publishedID(as[i].id)
	}
	return as
}

// ownFindings keeps the findings that rest on some answer of the analyst's
// own, moving the published rows they also rest on to Published.
func ownFindings(fs []Finding) []Finding {
	out := fs[:0]
	for _, f := range fs {
		var own, pub []int64
		for _, id := range f.Evidence {
			if id < 0 {
				pub = append(pub, publishedID(id)) // its own inverse
			} else {
				own = append(own, id)
			}
		}
		if len(own) == 0 && len(pub) > 0 {
			continue // the published release alone: nothing the analyst was answered
		}
		f.Evidence, f.Published = distinctIDs(own), distinctIDs(pub)
		out = append(out, f)
	}
	return out
}

// solveConstrained solves a system whose exact sums (a published release,
// suppress's answers) leave some counts free and whose noisy answers pin
// those: least squares on the noisy answers with the exact sums as
// constraints (the null-space method: x = x_p + Z t, x_p the least-norm
// solution of the exact sums, Z their null space). The noise's standard
// deviation comes from the noisy answers' residuals, over their count less
// the dimensions left free. For the prior-release pattern (k-1 exact pair
// sums, k noisy counts) this is the attack's own estimate: the mean of the
// k estimates of x_1, every count within 2 sd/sqrt(k).
func (s *system) solveConstrained(o Options) []Finding {
	index, unknowns := s.unknowns()
	n := len(unknowns)
	var exactRows, noisyRows []int
	for j := range s.sets {
		if s.exacts[j] {
			exactRows = append(exactRows, j)
		} else {
			noisyRows = append(noisyRows, j)
		}
	}
	rowsOf := func(js []int) (*mat.Dense, *mat.VecDense) {
		a, b := mat.NewDense(len(js), n, nil), mat.NewVecDense(len(js), nil)
		for r, j := range js {
			for _, v := range s.sets[j] {
				a.Set(r, index[v.SQL()], 1)
			}
			b.SetVec(r, s.values[j])
		}
		return a, b
	}
	E, e := rowsOf(exactRows)
	N, y := rowsOf(noisyRows)
	xp, Z, ok := nullSpace(E, e)
	if !ok || Z == nil {
		return nil
	}
	free := Z.RawMatrix().Cols
	dof := len(noisyRows) - free
	if dof <= 0 {
		return nil
	}
	// t minimises |N (x_p + Z t) - y|.
	var NZ, G, Ginv mat.Dense
	NZ.Mul(N, Z)
	G.Mul(NZ.T(), &NZ)
	if err := Ginv.Inverse(&G); err != nil {
		return nil // the noisy answers do not pin what the exact sums leave free
	}
	var r, rhs, tv, x mat.VecDense
	r.MulVec(N, xp)
	r.SubVec(y, &r)
	rhs.MulVec(NZ.T(), &r)
	tv.MulVec(&Ginv, &rhs)
	x.MulVec(Z, &tv)
	x.AddVec(xp, &x)
	var fit mat.VecDense
	fit.MulVec(N, &x)
	fit.SubVec(y, &fit)
	sigma := math.Sqrt(mat.Dot(&fit, &fit) / float64(dof))
	var cov, zg mat.Dense
	zg.Mul(Z, &Ginv)
	cov.Mul(&zg, Z.T())
	var out []Finding
	for i, v := range unknowns {
		errBound := 2 * sigma * math.Sqrt(math.Max(0, cov.At(i, i)))
		if errBound > o.MaxError {
			continue
		}
		out = append(out, estimate("linear system", s.table, s.cellOf(v), x.AtVec(i), errBound, s.ids))
	}
	return out
}

// nullSpace solves E x = e in the least-norm sense and returns that x_p and
// a basis Z of E's null space (nil when E determines every value), from
// E's singular value decomposition; ok is false when E x = e has no exact
// solution (the "exact" sums contradict each other).
func nullSpace(E *mat.Dense, e *mat.VecDense) (xp *mat.VecDense, Z *mat.Dense, ok bool) {
	_, n := E.Dims()
	var svd mat.SVD
	if !svd.Factorize(E, mat.SVDFull) {
		return nil, nil, false
	}
	vals := svd.Values(nil)
	var U, V mat.Dense
	svd.UTo(&U)
	svd.VTo(&V)
	rank := 0
	for _, v := range vals {
		if v > 1e-9*math.Max(1, vals[0]) {
			rank++
		}
	}
	xp = mat.NewVecDense(n, nil)
	for i := 0; i < rank; i++ {
		c := mat.Dot(U.ColView(i), e) / vals[i]
		xp.AddScaledVec(xp, c, V.ColView(i))
	}
	var check mat.VecDense
	check.MulVec(E, xp)
	check.SubVec(&check, e)
	if mat.Norm(&check, math.Inf(1)) > 1e-6 {
		return nil, nil, false
	}
	if rank == n {
		return xp, nil, true
	}
	return xp, mat.DenseCopyOf(V.Slice(0, n, rank, n)), true
}

// distinctIDs drops repeated ids (a GROUP BY's rows share one), keeping order.
func distinctIDs(ids []int64) []int64 {
	seen := map[int64]bool{}
	out := ids[:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// unknowns are the values the system's sets name, in order first named,
// and each one's index, by the value as SQL spells it.
func (s *system) unknowns() (map[string]int, []release.Constant) {
	index := map[string]int{}
	var unknowns []release.Constant
	for _, set := range s.sets {
		for _, v := range set {
			if _, ok := index[v.SQL()]; !ok {
				index[v.SQL()] = len(unknowns)
				unknowns = append(unknowns, v)
			}
		}
	}
	return index, unknowns
}
