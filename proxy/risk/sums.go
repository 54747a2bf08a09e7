package risk

import (
	"math"
	"strconv"

	"countwall/proxy/state/release"
)

// Sums are read beside counts: a released SUM whose mechanism adds no noise
// (exact, and suppress for the sums it publishes) pins its cell's sum, and
// two such sums determine a third the firewall may have withheld:
//
//   - sum differencing: the sums of P and of P AND NOT (X) pin the sum of
//     P AND X (sum-differencing's total less its complement);
//   - sum margins: a GROUP BY of one column whose sums were all published
//     but one (a cell the dominance or p% rule withheld without a second
//     suppressed beside it), and its margin, the sum of the same WHERE
//     without the GROUP BY: the withheld cell is the margin less the others.
//
// A finding is about one person (Individual) when the counts pin its
// cell's count to 1. AVG, and sums under noise, are not read yet.

// sumAnswer is one released SUM of one cell.
type sumAnswer struct {
	id       int64
	table    string
	column   string
	conj     []*release.Conjunct
	value    float64
	exact    bool
	withheld bool // sent as NULL: suppressed, or the sum of no value
	// statement and group say which GROUP BY release the cell belongs to
	// (group is the GROUP BY's one column, "" otherwise), and where is the
	// release's WHERE, the cells' margin.
	statement int64
	group     string
	where     []*release.Conjunct
}

func (s sumAnswer) key() string { return s.column + " of " + keyOf(s.table, s.conj) }

// appendSums appends the SUM cells of r, a statement with aggregates.
func (rd *reader) appendSums(out []sumAnswer, r *release.Release) []sumAnswer {
	q := r.Query
	if !r.Answered() || q == nil || len(q.Aggregates) == 0 {
		return out
	}
	where := rd.conditions(nil, q.Where)
	exact := r.Mechanism == "exact" || r.Mechanism == "suppress"
	group := ""
	if len(q.GroupBy) == 1 {
		group = q.GroupBy[0]
	}
	for _, c := range r.Cells {
		if len(c.Group) != len(q.GroupBy) || len(c.Aggregates) != len(q.Aggregates) {
			continue
		}
		conj := where
		if len(q.GroupBy) > 0 {
			conj = append(make([]*release.Conjunct, 0, len(where)+len(q.GroupBy)), where...)
			for i, col := range q.GroupBy {
				conj = append(conj, rd.intern(groupCondition(col, c.Group[i])))
			}
		}
		for i, agg := range q.Aggregates {
			if agg.Func != "sum" {
				continue
			}
			s := sumAnswer{id: r.ID, table: rd.in.of(q.Table), column: rd.in.of(agg.Column), conj: conj, exact: exact,
				statement: r.ID, group: group, where: where}
			if d := c.Aggregates[i]; d.Null {
				s.withheld = true
			} else if v, err := strconv.ParseFloat(d.Text, 64); err == nil {
				s.value = v
			} else {
				continue
			}
			out = append(out, s)
		}
	}
	return out
}

// pinnedSum is a cell's sum that exact answers pin.
type pinnedSum struct {
	value    float64
	evidence []int64
}

// sumFindings are what the exact sums determine: differences and margins.
func sumFindings(sums []sumAnswer, counts []answer) []Finding {
	pinnedSums := map[string]pinnedSum{}
	for _, s := range sums {
		if s.exact && !s.withheld {
			if _, ok := pinnedSums[s.key()]; !ok {
				pinnedSums[s.key()] = pinnedSum{value: s.value, evidence: []int64{s.id}}
			}
		}
	}
	ones := map[string]bool{} // cells whose count exact answers pin to 1
	for _, a := range counts {
		if a.exact && a.threshold == nil && a.value == 1 {
			ones[a.key()] = true
		}
	}
	var out []Finding
	seen := map[string]bool{}
	report := func(pattern string, s sumAnswer, conj []*release.Conjunct, value float64, evidence []int64) {
		k := s.column + " of " + keyOf(s.table, conj)
		if seen[k] {
			return
		}
		if p, ok := pinnedSums[k]; ok && p.value == value {
			return // asked and answered directly
		}
		seen[k] = true
		f := finding(pattern, s.table, conj, value, evidence)
		f.Sum, f.Individual = s.column, ones[keyOf(s.table, conj)]
		out = append(out, f)
	}
	for _, s := range sums {
		if !s.exact || s.withheld {
			continue
		}
		// The WHERE's conditions only: a GROUP BY's equality and its
		// margin give the other groups together, which secondary
		// suppression leaves known on purpose.
		for i, cj := range s.conj[:len(s.where)] {
			x, _, ok := complement(cj)
			if !ok {
				continue
			}
			parentConj := without(s.conj, i)
			parent, ok := pinnedSums[s.column+" of "+keyOf(s.table, parentConj)]
			if !ok {
				continue
			}
			target := append(append([]*release.Conjunct(nil), parentConj...), x...)
			report("sum differencing", s, target, parent.value-s.value, append(append([]int64(nil), parent.evidence...), s.id))
		}
	}
	for _, m := range marginCells(sums, pinnedSums) {
		report("sum margins", m.cell, m.cell.conj, m.value, m.evidence)
	}
	return out
}

// marginFinding is a withheld GROUP BY cell its margin determines.
type marginFinding struct {
	cell     sumAnswer
	value    float64
	evidence []int64
}

// marginCells finds the GROUP BY releases of exact sums with one cell
// withheld whose margin is pinned.
func marginCells(sums []sumAnswer, pinnedSums map[string]pinnedSum) []marginFinding {
	type release struct {
		published float64
		withheld  []sumAnswer
		first     sumAnswer
	}
	byStatement := map[[2]string]*release{}
	var order [][2]string
	for _, s := range sums {
		if s.group == "" || !s.exact {
			continue
		}
		k := [2]string{strconv.FormatInt(s.statement, 10), s.column}
		r, ok := byStatement[k]
		if !ok {
			r = &release{first: s}
			byStatement[k] = r
			order = append(order, k)
		}
		if s.withheld {
			r.withheld = append(r.withheld, s)
		} else {
			r.published += s.value
		}
	}
	var out []marginFinding
	for _, k := range order {
		r := byStatement[k]
		if len(r.withheld) != 1 {
			continue
		}
		margin, ok := pinnedSums[r.first.column+" of "+keyOf(r.first.table, r.first.where)]
		if !ok {
			continue
		}
		v := margin.value - r.published
		if math.Abs(v) < 1e-9 {
			v = 0
		}
		out = append(out, marginFinding{cell: r.withheld[0], value: v, evidence: append(append([]int64(nil), margin.evidence...), r.first.id)})
	}
	return out
}
