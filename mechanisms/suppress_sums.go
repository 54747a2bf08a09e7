package mechanisms

import (
	"fmt"
	"slices"
	"strings"

	"countwall/ir"
)

// The magnitude-table rules of the suppress mechanism, applied to a query
// with SUM or AVG beside the count threshold (Hundepool et al., Statistical
// Disclosure Control, 2012, section 4.2; Eurostat and the ABS use the same
// rules). Each summed column's contributions are per privacy unit, after
// the unit's rows in the cell are summed and each value clamped to the
// column's bounds; the rows without a unit count as one more contributor.
//
//   - (n, k) dominance: the n largest contributions hold more than k% of
//     the cell's total.
//   - p% rule: the total minus the two largest contributions is less than
//     p% of the largest, so that the second largest contributor could
//     estimate the largest to within p%.
//
// Both read absolute values. A cell that breaks either rule, or whose count
// is at most the threshold, is withheld as a whole (its count and every
// aggregate NULL, with the notice the counts use).
//
// Secondary suppression: a GROUP BY and its margin (the same query without
// one of the group columns, or without GROUP BY) published together would
// give a lone withheld cell as the margin minus the cells published beside
// it. So along every line of the answer (the cells that agree on all group
// columns but one), while exactly one cell is withheld, one more is: the
// smallest published cell at least as large as the withheld one (the pair's
// total then hides each within the other's size), else the largest. This
// protects against margins over the same WHERE only: a margin taken over a
// different WHERE (a complement, a different range) is not seen, and a line
// of one cell cannot be protected within this answer.

// Magnitude-rule defaults, as statistical offices commonly set them.
const (
	suppressDefaultDominanceN = 2
	suppressDefaultDominanceK = 85.0
	suppressDefaultPPercent   = 10.0
)

// magnitudeRules are the suppress mechanism's rules for sums.
type magnitudeRules struct {
	n         int     // dominance: the n largest contributions
	k         float64 // dominance: hold more than k% (100 turns it off)
	p         float64 // p% rule (0 turns it off)
	secondary bool
}

// sensitive reports whether a cell's summed column breaks a rule.
func (r magnitudeRules) sensitive(s ir.SumValue) bool {
	if s.N == 0 {
		return false // no value: nothing to reveal beyond the count
	}
	x := magnitudes(s)
	total := 0.0
	for _, v := range x {
		total += v
	}
	top := 0.0
	for _, v := range x[:min(r.n, len(x))] {
		top += v
	}
	if total > 0 && top*100 > r.k*total {
		return true
	}
	if len(x) == 0 {
		return false
	}
	second := 0.0
	if len(x) > 1 {
		second = x[1]
	}
	return (total-x[0]-second)*100 < r.p*x[0]
}

// withheldSums decides which cells of a query with sums are withheld: the
// primary rules, then the secondary suppression of the lines.
func (m *suppress) withheldSums(q *ir.Query, cells []ir.Cell) []bool {
	withheld := make([]bool, len(cells))
	for i, c := range cells {
		withheld[i] = c.Count <= m.threshold || slices.ContainsFunc(c.Sums, m.rules.sensitive)
	}
	if m.rules.secondary && len(q.GroupBy) > 0 {
		secondarySuppress(cells, withheld)
	}
	return withheld
}

// secondarySuppress withholds, until none is left, one more cell of every
// line of the answer that has exactly one withheld cell among two or more
// that are not empty.
// The lines are visited in the cells' order, so the choice is the same for
// the same cells.
func secondarySuppress(cells []ir.Cell, withheld []bool) {
	if len(cells) < 2 {
		return
	}
	ng := len(cells[0].Group)
	for changed := true; changed; {
		changed = false
		for j := range ng {
			for _, line := range answerLines(cells, j) {
				if complementInLine(cells, withheld, line) {
					changed = true
				}
			}
		}
	}
}

// answerLines are the lines of the answer along group column j: the cells
// that agree on every other group column, each line in the cells' order.
func answerLines(cells []ir.Cell, j int) [][]int {
	index := map[string]int{}
	var lines [][]int
	for i, c := range cells {
		var sb strings.Builder
		for g, v := range c.Group {
			if g != j {
				fmt.Fprintf(&sb, "%t%d:%s", v.Null, len(v.Text), v.Text)
			}
		}
		k, ok := index[sb.String()]
		if !ok {
			k = len(lines)
			index[sb.String()] = k
			lines = append(lines, nil)
		}
		lines[k] = append(lines[k], i)
	}
	return lines
}

// complementInLine withholds a complement in a line with exactly one
// withheld cell among two or more, and reports whether it did. Empty cells
// (a declared domain's values that no row has, often empty by the WHERE
// itself) take no part: withheld, they add nothing to the margin and so
// hide nothing, and the attacker can tell them empty from the WHERE.
func complementInLine(cells []ir.Cell, withheld []bool, line []int) bool {
	line = slices.DeleteFunc(slices.Clone(line), func(i int) bool { return cells[i].Count == 0 })
	lone := -1
	for _, i := range line {
		if withheld[i] {
			if lone >= 0 {
				return false // two or more: the margin gives only their total
			}
			lone = i
		}
	}
	if lone < 0 || len(line) < 2 {
		return false
	}
	need := cellMagnitude(cells[lone])
	pick, largest := -1, -1
	for _, i := range line {
		if withheld[i] {
			continue
		}
		size := cellMagnitude(cells[i])
		if size >= need && (pick < 0 || size < cellMagnitude(cells[pick])) {
			pick = i
		}
		if largest < 0 || size > cellMagnitude(cells[largest]) {
			largest = i
		}
	}
	if pick < 0 {
		pick = largest
	}
	withheld[pick] = true
	return true
}

// answerSums answers a query with sums: published cells exact, with their
// sums of clamped values; withheld ones suppressed or, in drop mode under
// GROUP BY, dropped.
func (m *suppress) answerSums(q *ir.Query, cells []ir.Cell) []Answer {
	withheld := m.withheldSums(q, cells)
	drop := m.drop && len(q.GroupBy) > 0
	answers := make([]Answer, len(cells))
	for i, c := range cells {
		switch {
		case !withheld[i]:
			answers[i] = Answer{Int: c.Count, Sums: clampedSums(c)}
		case drop:
			answers[i] = Answer{Dropped: true}
		default:
			answers[i] = Answer{Suppressed: true}
		}
	}
	return answers
}

// clampedSums are a cell's sums of clamped values, published as they are.
func clampedSums(c ir.Cell) *Sums {
	out := make([]ir.SumValue, len(c.Sums))
	for k, s := range c.Sums {
		out[k] = publishedSum(s, s.N, s.Clamped)
	}
	return &Sums{Columns: out}
}

// rulesText states the magnitude rules in force, for EXPLAIN and SHOW.
func (r magnitudeRules) text() string {
	var parts []string
	if r.k < 100 {
		parts = append(parts, fmt.Sprintf("(%d, %g) dominance: withheld when the %d largest contributors hold more than %g%% of a cell's total", r.n, r.k, r.n, r.k))
	}
	if r.p > 0 {
		parts = append(parts, fmt.Sprintf("p%% rule, p = %g: withheld when the total minus the two largest contributions is less than %g%% of the largest", r.p, r.p))
	}
	if len(parts) == 0 {
		parts = append(parts, "no magnitude rule (dominance_k 100, p_percent 0)")
	}
	return strings.Join(parts, "; ") + "; contributions per person after summing their rows, values clamped to the column's bounds"
}

// secondaryText states the secondary suppression, for EXPLAIN.
func (r magnitudeRules) secondaryText() string {
	if !r.secondary {
		return "off (secondary_suppression: false): a lone withheld cell of a GROUP BY is the margin minus the published cells"
	}
	return "along every line of a GROUP BY with exactly one withheld cell, one more is withheld (the smallest at least as large); " +
		"margins over another WHERE are not seen"
}
