package risk

import (
	"math"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// splitSum is one split of a parent condition P into parts whose counts
// add up to P's: P AND X with P AND NOT (X), or P AND col = v over
// several v.
type splitSum struct {
	sum      float64
	evidence []int64
}

// splits averages the splits of a condition (split-averaging: the sum of
// P AND X_i and P AND NOT X_i over many X_i, each with its own sticky
// noise, averages to P's count), and, where P was itself answered beside
// its parts, bounds the noise (the perturbation finder: the sum of three
// noisy answers differs from 0 by at most 3D).
func splits(as []answer, o Options) []Finding {
	first := map[string]answer{} // one answer per cell: sticky noise repeats itself
	var order []string
	for _, a := range as {
		if a.exact || a.threshold != nil {
			continue
		}
		if _, ok := first[a.key()]; !ok {
			first[a.key()] = a
			order = append(order, a.key())
		}
	}
	parents := map[string][]splitSum{}
	parentCell := map[string]answer{} // the parent's table and conjuncts
	var parentOrder []string
	add := func(table string, conj []string, s splitSum) {
		parent := cellKey(table, conj)
		if _, ok := parents[parent]; !ok {
			parentOrder = append(parentOrder, parent)
			parentCell[parent] = answer{table: table, conj: conj}
		}
		parents[parent] = append(parents[parent], s)
	}
	equalities := map[string][]answer{} // parent|column -> parts
	for _, k := range order {
		a := first[k]
		for i, c := range a.conj {
			rest := without(a.conj, i)
			if x, ok := negated(c); ok {
				other, ok := first[cellKey(a.table, append(append([]string(nil), rest...), conjuncts(x)...))]
				if ok {
					add(a.table, rest, splitSum{sum: a.value + other.value, evidence: []int64{other.id, a.id}})
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
	for _, p := range parentOrder {
		ss := parents[p]
		if len(ss) < o.MinRepeats {
			continue
		}
		sums := make([]float64, len(ss))
		var ids []int64
		for i, s := range ss {
			sums[i] = s.sum
			ids = append(ids, s.evidence...)
		}
		mean, sd := stat.MeanStdDev(sums, nil)
		errBound := 2 * sd / math.Sqrt(float64(len(ss)))
		if sd == 0 || errBound > o.MaxError {
			continue
		}
		out = append(out, estimate("split-averaging", parentCell[p].table, parentCell[p].conj, mean, errBound, ids))
	}
	if f, ok := noiseBound(first, equalities, o); ok {
		out = append(out, f)
	}
	return out
}

// noiseBound is the perturbation finder's bound: over every parent
// answered beside its parts P AND col = v (at least two), the largest
// |answer(P) - sum of the parts| / (parts + 1) is a lower bound on the
// noise's range D.
func noiseBound(first map[string]answer, equalities map[string][]answer, o Options) (Finding, bool) {
	best, triples := 0.0, 0
	var ids []int64
	var mech string
	for g, parts := range equalities {
		if len(parts) < 2 {
			continue
		}
		parentKey := g[:strings.LastIndex(g, "|")]
		parent, ok := first[parentKey]
		if !ok {
			continue
		}
		sum := 0.0
		for _, p := range parts {
			sum += p.value
		}
		triples++
		if d := math.Abs(parent.value-sum) / float64(len(parts)+1); d > best {
			best, mech = d, parent.mechanism
			ids = []int64{parent.id}
			for _, p := range parts {
				ids = append(ids, p.id)
			}
		}
	}
	if triples < o.MinRepeats || best == 0 {
		return Finding{}, false
	}
	return Finding{Pattern: "perturbation finder", Parameter: "noise bound D of " + mech, Value: math.Ceil(best - 1e-9),
		AtLeast: true, Evidence: ids}, true
}

// equalityColumn reads "col = constant" as col.
func equalityColumn(c string) (string, bool) {
	i := strings.Index(c, " = ")
	if i <= 0 || strings.ContainsAny(c[:i], " ()") {
		return "", false
	}
	return c[:i], true
}
