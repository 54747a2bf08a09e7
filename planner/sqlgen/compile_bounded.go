package sqlgen

import (
	"countwall/ir"
	"countwall/pgerror"
	"countwall/pglex"
	"countwall/planner/plan"
	"fmt"
	"strconv"
	"strings"
)

// rankAlias names the per-unit rank of a (group, unit) pair in the bounded
// rendering, and cellRankAlias the keyed hash it is ranked by.
const (
	rankAlias     = "cw_rank"
	cellRankAlias = "cw_r"
)

// SQLiteBounded renders a query whose counts are bounded per privacy unit
// (Needs.Bound): rows without a unit are left out, each (cell, unit) pair
// counts at most b.MaxRowsPerUnit rows, and when rank is set each unit keeps
// only b.MaxGroupsPerUnit of its cells, those with the smallest keyed hash of
// (unit, cell) under the firewall secret (countwall_cell_rank): the choice
// depends on who the unit is and the secret, never on the counts.
//
// With C = 1 and no cells to choose the query is COUNT(DISTINCT unit) per
// group, the fastest form; otherwise a per-(group, unit) pass clamps and
// ranks, and the outer query sums per group. Contributor keys are not
// available in this rendering.
func SQLiteBounded(t *ir.Table, q *ir.Query, needs ir.Needs, b ir.Bounds, rank bool, secret []byte) (string, []any, error) {
	if needs.Key {
		return "", nil, pgerror.Errorf(pgerror.InternalError, "planner: contributor keys are not computed under contribution bounds")
	}
	if b.MaxRowsPerUnit < 1 || b.MaxGroupsPerUnit < 1 {
		return "", nil, pgerror.Errorf(pgerror.InternalError, "planner: contribution bounds must be >= 1, got %d rows and %d groups per unit", b.MaxRowsPerUnit, b.MaxGroupsPerUnit)
	}
	c := &compiler{t: t}
	table := pglex.QuoteIdentAlways(t.Name)
	groups := make([]string, len(q.GroupBy))
	for i, g := range q.GroupBy {
		groups[i] = c.group(g)
	}
	unit := c.column(t.PrivacyUnit)
	where := " WHERE " + unit + " IS NOT NULL"
	var whereArgs []any
	if q.Where != nil {
		pred, args, err := wherePred(t, q.Where)
		if err != nil {
			return "", nil, err
		}
		where += " AND (" + pred + ")"
		whereArgs = args
	}
	if c.err != nil {
		return "", nil, c.err
	}

	var sb strings.Builder
	if !rank && (b.MaxRowsPerUnit == 1 || q.Agg == ir.CountDistinct) {
		// Each unit counts once in each of its cells: COUNT(DISTINCT unit).
		sb.WriteString("SELECT ")
		for _, g := range groups {
			sb.WriteString(g + ", ")
		}
		sb.WriteString("COUNT(DISTINCT " + unit + ")")
		if needs.Units {
			sb.WriteString(", COUNT(DISTINCT " + unit + ")")
		}
		sb.WriteString(" FROM " + table + where)
		writeGroupOrder(&sb, groups)
		return sb.String(), whereArgs, nil
	}

	inner := make([]string, len(groups))
	for i := range groups {
		inner[i] = fmt.Sprintf("%s%d", groupAlias, i)
	}
	var args []any
	if rank {
		args = append(args, secret)
	}
	args = append(args, whereArgs...)
	from := chooseCells(unitPass(groups, inner, unit, table+where, rank), inner, b, rank)

	sb.WriteString("SELECT ")
	for _, g := range inner {
		sb.WriteString(g + ", ")
	}
	if q.Agg == ir.CountDistinct || b.MaxRowsPerUnit == 1 {
		sb.WriteString("COUNT(*)")
	} else {
		sb.WriteString("COALESCE(SUM(MIN(" + rowsAlias + ", " + strconv.FormatInt(b.MaxRowsPerUnit, 10) + ")), 0)")
	}
	if needs.Units {
		sb.WriteString(", COUNT(*)")
	}
	sb.WriteString(" FROM (" + from + ")")
	writeGroupOrder(&sb, inner)
	return sb.String(), args, nil
}

// unitPass is the per-(group, unit) pass over from (the table and its
// WHERE): each pair's rows, and with rank the pair's keyed rank, whose ?
// comes before the WHERE's.
func unitPass(groups, inner []string, unit, from string, rank bool) string {
	var pass strings.Builder
	pass.WriteString("SELECT ")
	for i, g := range groups {
		pass.WriteString(g + " AS " + inner[i] + ", ")
	}
	pass.WriteString(unit + " AS " + unitAlias + ", COUNT(*) AS " + rowsAlias)
	if rank {
		pass.WriteString(", " + plan.CellRankFunc + "(?, " + unit)
		for _, g := range groups {
			pass.WriteString(", " + g)
		}
		pass.WriteString(") AS " + cellRankAlias)
	}
	// Unit first: the pairs come out ordered by unit, which the choice of
	// cells reads them by (measured about 1.2x faster than group first).
	pass.WriteString(" FROM " + from + " GROUP BY " + unit)
	for _, g := range groups {
		pass.WriteString(", " + g)
	}
	return pass.String()
}

// chooseCells keeps, with rank, each unit's G pairs of the pass of
// smallest rank; without, every pair.
func chooseCells(pass string, inner []string, b ir.Bounds, rank bool) string {
	switch {
	case rank && b.MaxGroupsPerUnit == 1:
		// One cell per unit: the pair of smallest rank, read with SQLite's
		// bare columns of a min() aggregate (https://sqlite.org/lang_select.html#bareagg),
		// which needs no window and measures about twice as fast.
		var chosen strings.Builder
		chosen.WriteString("SELECT ")
		for _, g := range inner {
			chosen.WriteString(g + ", ")
		}
		chosen.WriteString(rowsAlias + ", MIN(" + cellRankAlias + ") FROM (" + pass + ") GROUP BY " + unitAlias)
		return chosen.String()
	case rank:
		// Keep each unit's G pairs of smallest keyed hash; the group values
		// break the (improbable) ties so that the choice is deterministic.
		var ranked strings.Builder
		ranked.WriteString("SELECT ")
		for _, g := range inner {
			ranked.WriteString(g + ", ")
		}
		ranked.WriteString(rowsAlias + ", ROW_NUMBER() OVER (PARTITION BY " + unitAlias + " ORDER BY " + cellRankAlias)
		for _, g := range inner {
			ranked.WriteString(", " + g)
		}
		ranked.WriteString(") AS " + rankAlias + " FROM (" + pass + ")")
		return "SELECT * FROM (" + ranked.String() + ") WHERE " + rankAlias + " <= " + strconv.FormatInt(b.MaxGroupsPerUnit, 10)
	}
	return pass
}
