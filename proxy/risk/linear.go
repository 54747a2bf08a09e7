package risk

import (
	"math"
	"slices"
	"sort"

	"gonum.org/v1/gonum/mat"

	"countwall/proxy/state/release"
)

// system is the answered sums over sets of one column's values, under one
// base condition: the unknowns are the counts of base AND col = v.
type system struct {
	table, col string
	base       []*release.Conjunct
	sets       [][]release.Constant
	values     []float64
	ids        []int64
	exacts     []bool // which answers are exact
	wide       bool   // some set has more than one value
}

// linear solves each system whose answers are sums over sets of a column's
// values (col IN (...), several IN lists ORed, col = a OR col = b, col = v
// and GROUP BY col rows) with linear-reconstruction's least-squares
// solver: the noise remover's two-partitions recover a histogram, and
// linear reconstruction's random subsets of a group recover each person's
// secret bit. A count is reported when two standard errors (from the
// residuals) are within MaxError.
func linear(as []answer, o Options) []Finding {
	systems := map[parentColumn]*system{}
	var order []parentColumn
	add := func(a answer, i int, col string, set []release.Constant) {
		base := without(a.conj, i)
		k := parentColumn{keyOf(a.table, base), col}
		s, ok := systems[k]
		if !ok {
			s = &system{table: a.table, col: col, base: base}
			systems[k] = s
			order = append(order, k)
		}
		s.sets, s.values, s.ids = append(s.sets, set), append(s.values, a.value), append(s.ids, a.id)
		s.exacts = append(s.exacts, a.exact)
		s.wide = s.wide || len(set) > 1
	}
	// A sum over a wide set names its system by its widest condition;
	// a single value's count then joins the system of its column and base
	// if there is one.
	var singles []answer
	for _, a := range as {
		if a.threshold != nil {
			continue
		}
		widest, col, set := -1, "", []release.Constant(nil)
		for i, c := range a.conj {
			if cc, ss, ok := valueSet(c); ok && len(ss) > 1 && len(ss) > len(set) {
				widest, col, set = i, cc, ss
			}
		}
		if widest < 0 {
			singles = append(singles, a)
			continue
		}
		add(a, widest, col, set)
	}
	for _, a := range singles {
		for i, c := range a.conj {
			col, set, ok := valueSet(c)
			if !ok {
				continue
			}
			if _, known := systems[parentColumn{keyOf(a.table, without(a.conj, i)), col}]; known {
				add(a, i, col, set)
				break
			}
		}
	}
	var out []Finding
	for _, k := range order {
		out = append(out, systems[k].solve(o)...)
	}
	return out
}

func (s *system) solve(o Options) []Finding {
	if !s.wide {
		return nil
	}
	exact := !slices.Contains(s.exacts, false) // every answer exact
	if !exact && slices.Contains(s.exacts, true) {
		return s.solveConstrained(o)
	}
	index, unknowns := s.unknowns()
	m, n := len(s.sets), len(unknowns)
	if m <= n {
		return nil
	}
	subs := make([][]bool, m)
	A := mat.NewDense(m, n, nil)
	maxAnswer := 0.0
	for j, set := range s.sets {
		subs[j] = make([]bool, n)
		for _, v := range set {
			subs[j][index[v.SQL()]] = true
			A.Set(j, index[v.SQL()], 1)
		}
		maxAnswer = math.Max(maxAnswer, s.values[j])
	}
	caps := make([]int, n)
	for i := range caps {
		caps[i] = int(maxAnswer) + 1
	}
	x, err := SolveSubsetSums(subs, s.values, caps)
	if err != nil {
		return nil
	}
	var ata mat.Dense
	ata.Mul(A.T(), A)
	var inv mat.Dense
	if err := inv.Inverse(&ata); err != nil {
		return nil // the sets do not determine every value
	}
	rss := 0.0
	for j := range s.sets {
		fit := 0.0
		for i, in := range subs[j] {
			if in {
				fit += x[i]
			}
		}
		rss += (s.values[j] - fit) * (s.values[j] - fit)
	}
	sigma := math.Sqrt(rss / float64(m-n))
	unitLike := true
	for _, v := range x {
		unitLike = unitLike && math.Round(v) <= 1
	}
	var out []Finding
	for i, v := range unknowns {
		errBound := 2 * sigma * math.Sqrt(math.Max(0, inv.At(i, i)))
		if exact {
			errBound = 0
		}
		if errBound > o.MaxError {
			continue
		}
		f := estimate("linear system", s.table, s.cellOf(v), x[i], errBound, s.ids)
		f.Individual = f.Error < 0.5 && (f.Value == 1 || unitLike)
		out = append(out, f)
	}
	return out
}

// cellOf is the cell of one unknown: base AND col = v.
func (s *system) cellOf(v release.Constant) []*release.Conjunct {
	eq := release.Compare(s.col, release.OpEq, v)
	return append(append([]*release.Conjunct(nil), s.base...), &eq)
}

// valueSet reads a condition that selects a set of one column's values:
// col = v, col IN (v, ...), or an OR of those on one column. The set is
// sorted by the values as SQL spells them.
func valueSet(c *release.Conjunct) (col string, set []release.Constant, ok bool) {
	if !addValues(c, &col, &set) || len(set) == 0 {
		return "", nil, false
	}
	sort.Slice(set, func(i, j int) bool { return set[i].SQL() < set[j].SQL() })
	return col, set, true
}

// addValues adds the values c selects of *col to *set, false when c is
// not such a condition or names another column.
func addValues(c *release.Conjunct, col *string, set *[]release.Constant) bool {
	switch c.Op {
	case release.OpOr:
		for i := range c.Inner {
			if !addValues(&c.Inner[i], col, set) {
				return false
			}
		}
		return true
	case release.OpEq, release.OpIn:
		if c.Column == "" || (*col != "" && c.Column != *col) || (c.Op == release.OpEq && len(c.Values) != 1) {
			return false
		}
		*col, *set = c.Column, append(*set, c.Values...)
		return true
	}
	return false
}
