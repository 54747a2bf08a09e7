package risk

import (
	"fmt"

	"countwall/proxy/state/release"
)

// minMarginals is how many noisy counts of one column's values (one-way
// marginals) an analyst must hold before the tracing finding is drawn.
const minMarginals = 1000

// marginalGroup is the noisy counts an analyst holds of one column's
// values under one base condition: the one-way marginals of the tracing
// attack (snp's values under allele = 1).
type marginalGroup struct {
	table, col string
	base       []*release.Conjunct
	counts     map[string]float64 // the column's value (as a literal) -> the count first released
	ids        []int64
}

// marginalGroups gathers the noisy counts of single values of one column
// under one base, in the order first seen.
func marginalGroups(as []answer) []*marginalGroup {
	groups := map[parentColumn]*marginalGroup{}
	var order []*marginalGroup
	for _, a := range as {
		if a.exact || a.threshold != nil {
			continue
		}
		for i, c := range a.conj {
			if c.Op != release.OpEq || c.Column == "" || len(c.Values) != 1 {
				continue
			}
			base := without(a.conj, i)
			k := parentColumn{keyOf(a.table, base), c.Column}
			g, ok := groups[k]
			if !ok {
				g = &marginalGroup{table: a.table, col: c.Column, base: base, counts: map[string]float64{}}
				groups[k] = g
				order = append(order, g)
			}
			v := c.Values[0].SQL()
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
// protected table and a sample of the population, the owner's check runs
// the test itself on every person of the table (Marginals).
func marginals(as []answer, o Options) []Finding {
	var out []Finding
	for _, g := range marginalGroups(as) {
		if len(g.counts) < minMarginals {
			continue
		}
		f := finding("tracing", g.table, g.base, float64(len(g.counts)), g.ids)
		f.Parameter = marginalsParameter(g.col)
		out = append(out, f)
	}
	return out
}

// marginalsParameter is a tracing flag's Parameter, by which FlagIn
// finds the flag of a column's marginals again.
func marginalsParameter(col string) string { return fmt.Sprintf("noisy marginals of %s released", col) }

// Marginals are the noisy counts an analyst was answered of one column's
// values under one base condition: what the tracing test scores people
// against.
type Marginals struct {
	Table, Column string
	Base          []release.Conjunct
	// Counts are the count first released of each value, by the value as
	// SQL spells it (17, 'F').
	Counts   map[string]float64
	Evidence []int64 // the audit rows that released them
}

// Marginals are the groups of noisy one-way marginals the analyst was
// answered, in the order first asked.
func (h *History) Marginals(analyst string) []Marginals {
	var out []Marginals
	for _, g := range marginalGroups(h.answersOf(analyst)) {
		base := make([]release.Conjunct, len(g.base))
		for i, c := range g.base {
			base[i] = *c
		}
		out = append(out, Marginals{Table: g.table, Column: g.col, Base: base, Counts: g.counts, Evidence: g.ids})
	}
	return out
}

// FlagIn is the index of these marginals' tracing flag among fs, or -1.
func (m Marginals) FlagIn(fs []Finding) int {
	base := make([]string, len(m.Base))
	for i, c := range m.Base {
		base[i] = c.Text
	}
	key, param := cellKey(m.Table, base), marginalsParameter(m.Column)
	for i, f := range fs {
		if f.TracingFlag() && f.Table == m.Table && f.Parameter == param && cellKey(f.Table, f.Cell) == key {
			return i
		}
	}
	return -1
}
