package risk

import "fmt"

// minMarginals is how many noisy counts of one column's values (one-way
// marginals) an analyst must hold before the tracing finding is drawn.
const minMarginals = 1000

// marginals flags the tracing pattern (Dwork et al. 3.2): noisy counts of
// many attributes of one population, which let whoever holds a person's
// data and a reference sample tell whether the person is in the table. It
// determines no count; it says how many marginals were released.
func marginals(as []answer, o Options) []Finding {
	type group struct {
		table, col string
		base       []string
		values     map[string]bool
		ids        []int64
	}
	groups := map[string]*group{}
	var order []string
	for _, a := range as {
		if a.exact || a.threshold != nil {
			continue
		}
		for i, c := range a.conj {
			col, ok := equalityColumn(c)
			if !ok {
				continue
			}
			base := without(a.conj, i)
			k := cellKey(a.table, base) + "|" + col
			g, ok := groups[k]
			if !ok {
				g = &group{table: a.table, col: col, base: base, values: map[string]bool{}}
				groups[k] = g
				order = append(order, k)
			}
			if !g.values[c] {
				g.values[c] = true
				g.ids = append(g.ids, a.id)
			}
		}
	}
	var out []Finding
	for _, k := range order {
		g := groups[k]
		if len(g.values) < minMarginals {
			continue
		}
		out = append(out, Finding{Pattern: "tracing", Table: g.table, Cell: g.base,
			Parameter: fmt.Sprintf("noisy marginals of %s released", g.col), Value: float64(len(g.values)), Evidence: g.ids})
	}
	return out
}
