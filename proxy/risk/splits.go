package risk

import (
	"math"

	"countwall/proxy/state/release"
)

// splits averages the splits of a condition (split-averaging: the sum of
// P AND X_i and P AND NOT X_i over many X_i, each with its own sticky
// noise, averages to P's count), and, where P was itself answered beside
// its parts, bounds the noise (the perturbation finder: the sum of three
// noisy answers differs from 0 by at most 3D).
func splits(as []answer, sp func() *space, o Options) []Finding {
	keys := newCellKeys()
	first := map[string]answer{} // one answer per cell: sticky noise repeats itself
	at := map[string]int{}       // the cell's place in order
	var order []string
	for _, a := range as {
		if a.exact || a.threshold != nil {
			continue
		}
		k := keys.of(a.table, a.conj)
		if _, ok := first[k]; !ok {
			first[k], at[k] = a, len(order)
			order = append(order, k)
		}
	}
	forms := map[string]*form{}
	var formOrder []*form
	add := func(a answer, conj []*release.Conjunct, x string, sum float64, ids ...int64) {
		parent := keys.of(a.table, conj)
		f, ok := forms[parent]
		if !ok {
			f = &form{table: a.table, conj: conj, mechanism: a.mechanism, byX: map[string]float64{}}
			forms[parent] = f
			formOrder = append(formOrder, f)
		}
		f.sums, f.byX[x], f.ids = append(f.sums, sum), sum, append(f.ids, ids...)
	}
	equalities := map[parentColumn][]answer{} // the parts of each parent, by column
	var parents []parentColumn                // in the order first seen
	for n, k := range order {
		a := first[k]
		for i, c := range a.conj {
			rest := without(a.conj, i)
			x, folded, ok := complement(c)
			if ok {
				// A split is taken at its NOT side or, where the NOT was
				// folded into a comparison, at its later half, once.
				k := keys.of(a.table, append(append([]*release.Conjunct(nil), rest...), x...))
				if other, asked := first[k]; asked && (!folded || at[k] < n) {
					add(a, rest, splitName(c, x, folded), a.value+other.value, other.id, a.id)
				}
			}
			if c.Op == release.OpEq && c.Column != "" {
				g := parentColumn{keys.of(a.table, rest), c.Column}
				if _, seen := equalities[g]; !seen {
					parents = append(parents, g)
				}
				equalities[g] = append(equalities[g], a)
			}
		}
	}
	var out []Finding
	if len(formOrder) > 0 {
		out = averageForms(formOrder, sp(), o)
	}
	if f, ok := noiseBound(first, parents, equalities, o); ok {
		out = append(out, f)
	}
	return out
}

// parentColumn names the parts P AND col = v of a parent cell P.
type parentColumn struct{ parent, col string }

// splitName names the split X of a pair P AND X / P AND NOT X the same
// whichever half is read: a NOT's own text, or the lesser of a folded
// comparison and its opposite.
func splitName(c *release.Conjunct, x []*release.Conjunct, folded bool) string {
	if !folded {
		return c.Text
	}
	return min(c.Text, x[0].Text)
}

// noiseBound is the perturbation finder's estimate of the noise's range
// D: over every parent answered beside its two parts P AND col = v (a
// part answered 0 was suppressed and is left out), z = the parts' sum -
// the parent's answer is the sum of three noise terms, and NoiseBound
// reads D from their range.
func noiseBound(first map[string]answer, parents []parentColumn, equalities map[parentColumn][]answer, o Options) (Finding, bool) {
	zMin, zMax, absMin, absMax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	triples := 0
	var ids []int64
	var mech string
	for _, g := range parents {
		parts := equalities[g]
		if len(parts) != 2 || parts[0].value == 0 || parts[1].value == 0 {
			continue
		}
		parent, ok := first[g.parent]
		if !ok {
			continue
		}
		z := parts[0].value + parts[1].value - parent.value
		zMin, zMax = math.Min(zMin, z), math.Max(zMax, z)
		absMin, absMax = math.Min(absMin, math.Abs(z)), math.Max(absMax, math.Abs(z))
		triples++
		mech = parent.mechanism
		ids = append(ids, parent.id, parts[0].id, parts[1].id)
	}
	if triples < o.MinRepeats || zMax == 0 && zMin == 0 {
		return Finding{}, false
	}
	d, _ := NoiseBound(zMin, zMax, absMin, absMax, triples)
	return Finding{Pattern: "perturbation finder", Parameter: "noise bound D of " + mech, Value: d, Evidence: ids}, true
}
