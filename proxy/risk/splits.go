package risk

import (
	"math"
	"strings"

	"countwall/attacks"
)

// splits averages the splits of a condition (split-averaging: the sum of
// P AND X_i and P AND NOT X_i over many X_i, each with its own sticky
// noise, averages to P's count), and, where P was itself answered beside
// its parts, bounds the noise (the perturbation finder: the sum of three
// noisy answers differs from 0 by at most 3D).
func splits(as []answer, sp func() *space, o Options) []Finding {
	first := map[string]answer{} // one answer per cell: sticky noise repeats itself
	var order []string
	for _, a := range as {
		if a.exact || a.threshold != nil {
			continue
		}
		k := a.key()
		if _, ok := first[k]; !ok {
			first[k] = a
			order = append(order, k)
		}
	}
	forms := map[string]*form{}
	var formOrder []*form
	add := func(a answer, conj []string, x string, sum float64, ids ...int64) {
		parent := cellKey(a.table, conj)
		f, ok := forms[parent]
		if !ok {
			f = &form{table: a.table, conj: conj, mechanism: a.mechanism, byX: map[string]float64{}}
			forms[parent] = f
			formOrder = append(formOrder, f)
		}
		f.sums, f.byX[x], f.ids = append(f.sums, sum), sum, append(f.ids, ids...)
	}
	equalities := map[string][]answer{} // parent|column -> parts
	for _, k := range order {
		a := first[k]
		for i, c := range a.conj {
			rest := without(a.conj, i)
			if x, ok := negated(c); ok {
				other, ok := first[cellKey(a.table, append(append([]string(nil), rest...), conjuncts(x)...))]
				if ok {
					add(a, rest, x, a.value+other.value, other.id, a.id)
				}
				continue
			}
			if col, ok := equalityColumn(c); ok {
				g := cellKey(a.table, rest) + "|" + col
				equalities[g] = append(equalities[g], a)
			}
		}
	}
	var out []Finding
	if len(formOrder) > 0 {
		out = averageForms(formOrder, sp(), o)
	}
	if f, ok := noiseBound(first, equalities, o); ok {
		out = append(out, f)
	}
	return out
}

// noiseBound is the perturbation finder's estimate of the noise's range
// D: over every parent answered beside its two parts P AND col = v (a
// part answered 0 was suppressed and is left out), z = the parts' sum -
// the parent's answer is the sum of three noise terms, and
// attacks.NoiseBound reads D from their range.
func noiseBound(first map[string]answer, equalities map[string][]answer, o Options) (Finding, bool) {
	zMin, zMax, absMin, absMax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	triples := 0
	var ids []int64
	var mech string
	for g, parts := range equalities {
		if len(parts) != 2 || parts[0].value == 0 || parts[1].value == 0 {
			continue
		}
		parent, ok := first[g[:strings.LastIndex(g, "|")]]
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
	d, _ := attacks.NoiseBound(zMin, zMax, absMin, absMax, triples)
	return Finding{Pattern: "perturbation finder", Parameter: "noise bound D of " + mech, Value: d, Evidence: ids}, true
}

// equalityColumn reads "col = constant" as col.
func equalityColumn(c string) (string, bool) {
	i := strings.Index(c, " = ")
	if i <= 0 || strings.ContainsAny(c[:i], " ()") {
		return "", false
	}
	return c[:i], true
}
