package risk

import (
	"math"

	"countwall/proxy/state/release"
)

// cellBounds is what exact answers and threshold answers say of one cell.
type cellBounds struct {
	// kind is how its first answer was asked (its shape, mechanism and
	// table): one pointer, where a search's millions of cells held the
	// three strings each.
	kind      *kind
	threshold bool // a threshold answer took part
	conj      []*release.Conjunct
	lo, hi    float64
	evidence  []int64
}

func (c *cellBounds) pinned() bool { return c.lo == c.hi }

// pinned finds the cells whose count exact answers pin: a count answered
// without noise, a threshold search whose answers meet (the IDP and BDP
// searches: count >= b answered 1 and count >= b+1 answered 0), and the
// difference of two pinned counts whose conditions differ by a negation
// (differencing: the total and the count of NOT (T) pin T).
//
// The planner folds a NOT around one comparison into its opposite (NOT
// (age > 60) is age <= 60), which the audit cannot tell from the
// comparison written as it is; such a pair is read as a difference only
// where exact counts pinned both cells, not a threshold search, whose
// halves the rows solver relates (a search's every half would otherwise
// difference its parent).
func pinned(as []answer, o Options) []Finding {
	cells := map[string]*cellBounds{}
	keys := newCellKeys()
	var order []string
	for _, a := range as {
		lo, hi, ok := boundsOf(a, o)
		if !ok {
			continue
		}
		k := keys.of(a.table, a.conj)
		c, ok := cells[k]
		if !ok {
			c = &cellBounds{kind: a.kind, conj: a.conj, hi: math.Inf(1)}
			cells[k] = c
			order = append(order, k)
		}
		before := *c
		c.lo, c.hi = math.Max(c.lo, lo), math.Min(c.hi, hi)
		if c.lo != before.lo || c.hi != before.hi {
			c.evidence = append(c.evidence, a.id)
			c.threshold = c.threshold || a.threshold != nil
		}
	}
	// A search asks many cells of one shape; a count of 0 (nobody) or a
	// bare existence is reported only from a search, not from a one-off
	// question, where it discloses no one.
	cellsOfShape := map[string]int{}
	for _, k := range order {
		cellsOfShape[cells[k].kind.shape]++
	}
	searched := func(c *cellBounds) bool { return cellsOfShape[c.kind.shape] >= o.MinRepeats }
	var out []Finding
	report := func(pattern string, c *cellBounds) {
		if c.lo > o.MaxCell || c.lo < 0 || (c.lo == 0 && pattern != "differencing" && !searched(c)) {
			return
		}
		f := finding(pattern, c.kind.table, c.conj, c.lo, c.evidence)
		f.Individual = c.lo == 1
		out = append(out, f)
	}
	for _, k := range order {
		c := cells[k]
		if !c.pinned() {
			if c.kind.mechanism == "bdp" && !c.threshold && c.lo >= 1 && math.IsInf(c.hi, 1) && searched(c) {
				f := finding("bdp existence", c.kind.table, c.conj, 1, c.evidence)
				f.AtLeast = true
				out = append(out, f)
			}
			continue
		}
		pattern := "exact answer"
		if c.threshold {
			pattern = "threshold search"
		}
		report(pattern, c)
		// Differencing: this cell is P AND NOT (X); with P pinned too,
		// P AND X is pinned.
		for i, cj := range c.conj {
			x, folded, ok := complement(cj)
			if !ok {
				continue
			}
			parentConj := without(c.conj, i)
			parent, ok := cells[keys.of(c.kind.table, parentConj)]
			if !ok || !parent.pinned() || folded && (c.threshold || parent.threshold) {
				continue
			}
			targetConj := append(append([]*release.Conjunct(nil), parentConj...), x...)
			if t, ok := cells[keys.of(c.kind.table, targetConj)]; ok && t.pinned() {
				continue // asked directly
			}
			d := &cellBounds{kind: &kind{table: c.kind.table}, conj: targetConj, lo: parent.lo - c.lo, hi: parent.lo - c.lo,
				evidence: append(append([]int64(nil), parent.evidence...), c.evidence...)}
			report("differencing", d)
		}
	}
	return out
}

// boundsOf is what one answer says of its cell's count: an exact count
// pins it; an exact threshold answer bounds it on one side. Under idp the
// noise itself speaks (Protivash et al. Lemma 3.3): COUNT(*) > b is
// answered with noise exactly when max(c-k, 0) <= b < min(c+k, n), which
// puts c in [b-k+1, b+k], and an exact answer puts c outside that window
// (for b below the table size n, which the thresholds of a search are).
// Under bdp a count is noisy exactly when some but not all rows satisfy
// its condition, so c >= 1.
func boundsOf(a answer, o Options) (lo, hi float64, ok bool) {
	inf := math.Inf(1)
	idp := a.mechanism == "idp"
	k := float64(o.IDPK)
	switch {
	case a.exact && a.threshold == nil:
		return a.value, a.value, true
	case a.threshold == nil && a.mechanism == "bdp":
		return 1, inf, true
	case a.threshold == nil:
		return 0, 0, false
	}
	b := float64(a.threshold.atLeast - 1)
	switch {
	case a.exact && a.value >= 0.5 && idp:
		return b + k + 1, inf, true
	case a.exact && a.value >= 0.5:
		return b + 1, inf, true
	case a.exact && idp:
		return 0, math.Max(0, b-k), true
	case a.exact:
		return 0, b, true
	case idp:
		return math.Max(0, b-k+1), b + k, true
	case a.mechanism == "bdp":
		return 1, inf, true
	}
	return 0, 0, false
}

// complement is what c negates, as conditions: the conjuncts of a NOT
// (...) kept as written, or (folded) the comparison whose opposite c is.
func complement(c *release.Conjunct) (x []*release.Conjunct, folded bool, ok bool) {
	if c.Op == release.OpNot {
		return flatAnd(nil, c.Inner), false, len(c.Inner) > 0
	}
	o, ok := opposite(*c)
	if !ok {
		return nil, false, false
	}
	return []*release.Conjunct{&o}, true, true
}

// flatAnd appends the conjuncts of cs to out, opening nested conjunctions.
func flatAnd(out []*release.Conjunct, cs []release.Conjunct) []*release.Conjunct {
	for i := range cs {
		if cs[i].Op == release.OpAnd {
			out = flatAnd(out, cs[i].Inner)
			continue
		}
		out = append(out, &cs[i])
	}
	return out
}

// opposites are the comparisons true exactly where the other is false
// (NULL in both where either is).
var opposites = map[release.Op]release.Op{
	release.OpEq: release.OpNe, release.OpNe: release.OpEq,
	release.OpLt: release.OpGe, release.OpGe: release.OpLt,
	release.OpGt: release.OpLe, release.OpLe: release.OpGt,
	release.OpLike: release.OpNotLike, release.OpNotLike: release.OpLike,
}

// opposite is the condition true exactly where c is false: the negation
// the planner folds a NOT around c into. An expression's comparison has
// none here (its text is the planner's to render).
func opposite(c release.Conjunct) (release.Conjunct, bool) {
	if c.Column == "" {
		return release.Conjunct{}, false
	}
	switch op := c.Op; {
	case opposites[op] != "" && len(c.Values) == 1:
		return release.Compare(c.Column, opposites[op], c.Values[0]), true
	case (op == release.OpBetween || op == release.OpNotBetween) && len(c.Values) == 2:
		return release.Between(c.Column, op == release.OpBetween, c.Values[0], c.Values[1]), true
	case (op == release.OpIn || op == release.OpNotIn) && len(c.Values) > 0:
		return release.In(c.Column, op == release.OpIn, c.Values), true
	case op == release.OpIsNull || op == release.OpIsNotNull:
		return release.IsNull(c.Column, op == release.OpIsNull), true
	}
	return release.Conjunct{}, false
}

// without is a copy of s without its i-th element.
func without[T any](s []T, i int) []T {
	out := append([]T(nil), s[:i]...)
	return append(out, s[i+1:]...)
}
