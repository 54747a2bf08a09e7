package risk

import "fmt"

// minMarginals is how many noisy counts of one column's values (one-way
// marginals) an analyst must hold before the tracing finding is drawn.
const minMarginals = 1000

// marginalGroup is the noisy counts an analyst holds of one column's
// values under one base condition: the one-way marginals of the tracing
// attack (snp's values under allele = 1).
type marginalGroup struct {
	table, col string
	base       []string
	counts     map[string]float64 // the column's value (as a literal) -> the count first released
	ids        []int64
}

// marginalGroups gathers the noisy counts of single values of one column
// under one base, in the order first seen.
func marginalGroups(as []answer) []*marginalGroup {
	groups := map[string]*marginalGroup{}
	var order []*marginalGroup
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
				g = &marginalGroup{table: a.table, col: col, base: base, counts: map[string]float64{}}
				groups[k] = g
				order = append(order, g)
			}
			v := c[len(col)+len(" = "):]
			if _, seen := g.counts[v]; !seen {
				g.counts[v] = a.value
				if n := len(g.ids); n == 0 || g.ids[n-1] != a.id { // a GROUP BY's rows share one statement
					g.ids = append(g.ids, a.id)
				}
			}
		}
	}
	return order
}

// marginals flags the tracing pattern (Dwork et al. 3.2): noisy counts of
// many attributes of one population, which let whoever holds a person's
// data and a reference sample tell whether the person is in the table. It
// determines no count; it says how many marginals were released. With the
// protected table and a sample of the population, Trace runs the test
// itself on every person of the table.
func marginals(as []answer, o Options) []Finding {
	var out []Finding
	for _, g := range marginalGroups(as) {
		if len(g.counts) < minMarginals {
			continue
		}
		out = append(out, Finding{Pattern: "tracing", Table: g.table, Cell: g.base,
			Parameter: marginalsParameter(g.col), Value: float64(len(g.counts)), Evidence: g.ids})
	}
	return out
}

// marginalsParameter is a tracing flag's Parameter, by which TraceHistory
// finds the flag of a column's marginals again.
func marginalsParameter(col string) string { return fmt.Sprintf("noisy marginals of %s released", col) }
