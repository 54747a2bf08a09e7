package proxy

import (
	"fmt"
	"sort"

	"countwall/mechanisms"
)

// showMechanism answers SHOW mechanism: one column, whose first row is the
// mechanism's name (what drivers and the attacks read), then its claim as
// the mechanism states it (with its parameters only where the config's
// publish_parameters allows), then, for a mechanism that bounds each privacy
// unit's contribution, the bounds in force on each table, and for one that
// releases undeclared GROUP BY by partition selection, its share at the
// session's.
func showMechanism(rt *runtime, s *Session) *Result {
	lines := []string{rt.mech.Name()}
	if d, ok := rt.mech.(mechanisms.Describer); ok {
		lines = append(lines, d.Describe())
	}
	if b, ok := rt.mech.(mechanisms.ContributionBounder); ok {
		names := make([]string, 0, len(rt.catalog.Tables))
		for n := range rt.catalog.Tables {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			in := rt.catalog.Tables[n].ContributionBounds(b.ContributionBounds())
			lines = append(lines, fmt.Sprintf("bounds on %s: max_rows_per_unit %d, max_groups_per_unit %d",
				n, in.MaxRowsPerUnit, in.MaxGroupsPerUnit))
		}
	}
	if mechanisms.SelectsPartitions(rt.mech) {
		eps, delta := s.share(rt)
		if selEps, selDelta, ok := mechanisms.SelectionShare(rt.mech, eps, delta); ok {
			lines = append(lines, fmt.Sprintf("GROUP BY without a declared domain at this session's share (epsilon %g, delta %g): partition selection at epsilon %g, delta %g", eps, delta, selEps, selDelta))
		}
	}
	res := &Result{Columns: showColumns("mechanism"), Tag: "SHOW"}
	for _, l := range lines {
		res.Rows = append(res.Rows, []Value{{Text: l}})
		res.Suppressed = append(res.Suppressed, false)
	}
	return res
}
