package proxy

import (
	"fmt"
	"math"
	"strconv"

	"countwall/ir"
	"countwall/mechanisms"
	"countwall/pgerror"
)

// queryNeeds is what the planner must compute for q under m. A mechanism
// that drops groups needs every group found before it drops, with no limit
// on how many (GroupLimit): a limit on the groups found would refuse a
// statement because of a group the answer never shows. What that costs is
// bounded by a public figure, the table's rows, which no group count can
// exceed; max_groups applies to the groups released (truncateGroups). One
// that releases groups by partition selection also needs the distinct units
// of each group, for a GROUP BY over undeclared columns only, since no other
// query pays for them.
func queryNeeds(m mechanisms.Mechanism, t *ir.Table, q *ir.Query) ir.Needs {
	needs := m.Needs()
	// A mechanism that claims a loss claims it for everything an answer
	// shows, its time included: the backends then do the same work
	// whatever the rows hold (see docs/timing.md).
	needs.Oblivious = mechanisms.Accounts(m)
	if !mechanisms.DropsLowCounts(m) {
		return needs
	}
	needs.GroupLimit = math.MaxInt
	if mechanisms.SelectsPartitions(m) {
		for _, g := range q.GroupBy {
			if c := t.Columns[g]; c == nil || c.Domain == nil {
				needs.Units = true
			}
		}
	}
	return needs
}

// truncateGroups keeps the first max rows of a released GROUP BY in the
// answer's order (ORDER BY, else the group values'), saying so in a notice.
// Which rows are kept depends only on the rows the mechanism released, never
// on the groups it dropped.
func truncateGroups(res *Result, max int) {
	if max <= 0 || len(res.Rows) <= max {
		return
	}
	released := len(res.Rows)
	res.Rows, res.Suppressed = res.Rows[:max], res.Suppressed[:max]
	res.Tag = "SELECT " + strconv.Itoa(max)
	note := fmt.Sprintf("%d groups were released; the first %d in the answer's order are shown (max_groups)", released, max)
	if res.Notice != "" {
		note = res.Notice + "\n" + note
	}
	res.Notice = note
}

// checkGroupDomains refuses a GROUP BY over a column without a declared
// public domain unless the mechanism drops low-count groups (partition
// selection included): otherwise the rows that come back would reveal which
// groups exist.
func checkGroupDomains(t *ir.Table, q *ir.Query, m mechanisms.Mechanism) error {
	if mechanisms.DropsLowCounts(m) {
		return nil
	}
	for _, g := range q.GroupBy {
		if t.Columns[g].Domain == nil {
			return &pgerror.Error{Code: pgerror.FeatureNotSupported,
				Message: fmt.Sprintf("GROUP BY %q needs a declared public domain under the %s mechanism", g, m.Name()),
				Hint:    fmt.Sprintf("declare tables.%s.domains.%s in the config (categories or an integer range), or use a mechanism that drops low counts (layered, or suppress with mode drop) or selects partitions (laplace and gaussian with partition_selection enabled)", t.Name, g)}
		}
	}
	return nil
}
