package proxy

import (
	"countwall/mechanisms"
	"countwall/planner"
)

// queryNeeds is what the planner must compute for q under m. A mechanism
// that drops groups needs every group found before it drops (GroupLimit,
// so that max_groups applies to the groups released, never to those
// dropped); one that releases groups by partition selection also needs the
// distinct units of each group, for a GROUP BY over undeclared columns
// only, since no other query pays for them.
func queryNeeds(m mechanisms.Mechanism, t *planner.Table, q *planner.Query) planner.Needs {
	needs := m.Needs()
	if !mechanisms.DropsLowCounts(m) {
		return needs
	}
	needs.GroupLimit = foundGroupsLimit
	if mechanisms.SelectsPartitions(m) {
		for _, g := range q.GroupBy {
			if c := t.Columns[g]; c == nil || c.Domain == nil {
				needs.Units = true
			}
		}
	}
	return needs
}
