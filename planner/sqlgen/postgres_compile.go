package sqlgen

import (
	"countwall/ir"
	"countwall/pglex"
	"fmt"
	"slices"
	"strings"
)

// Postgres renders q for PostgreSQL. With perUnit the rows are one
// per (group, unit): the group columns, the unit, and its row count; rows
// without a unit are left out when the counts are bounded. Otherwise the rows
// are the cells: the group columns, the count (of distinct units when the
// counts are bounded), and the units when asked.
func Postgres(t *ir.Table, q *ir.Query, needs ir.Needs, perUnit bool, d PostgresDialect) (string, []any, error) {
	c := &compiler{t: t, dialect: d}
	groups := make([]string, len(q.GroupBy))
	for i, g := range q.GroupBy {
		groups[i] = c.column(g)
	}
	var unit string
	if perUnit || q.Agg == ir.CountDistinct || needs.Units || needs.Bound {
		unit = c.column(t.PrivacyUnit)
	}
	var conds []string
	if perUnit && needs.Bound {
		conds = append(conds, unit+" IS NOT NULL")
	}
	if q.Where != nil {
		c.pred(q.Where)
		conds = append(conds, "("+c.sb.String()+")")
	}
	if c.err != nil {
		return "", nil, c.err
	}

	var sb strings.Builder
	sb.WriteString("SELECT ")
	for _, g := range groups {
		sb.WriteString(g + ", ")
	}
	if perUnit {
		sb.WriteString(unit + ", COUNT(*)")
	} else {
		if q.Agg == ir.CountDistinct || needs.Bound {
			sb.WriteString("COUNT(DISTINCT " + unit + ")")
		} else {
			sb.WriteString("COUNT(*)")
		}
		if needs.Units {
			sb.WriteString(", COUNT(DISTINCT " + unit + ")")
		}
	}
	sb.WriteString(" FROM " + pglex.QuoteIdentAlways(t.Name))
	if len(conds) > 0 {
		sb.WriteString(" WHERE " + strings.Join(conds, " AND "))
	}
	keys := slices.Clone(groups)
	if perUnit {
		keys = append(keys, unit)
	}
	if len(keys) > 0 {
		sb.WriteString(" GROUP BY " + strings.Join(keys, ", "))
	}
	return sb.String(), c.args, nil
}

// PostgresKeys renders q with contributor keys computed by
// PostgreSQL: the inner query has one row per (group, unit) with the unit's
// row count and record key, the first four bytes of
// HMAC-SHA256(secret, the unit's text) as RecordKey computes them; the outer
// query sums per group. The rows are cells: the group columns, the count,
// the units and the key. The secret is the first parameter.
func PostgresKeys(t *ir.Table, q *ir.Query, d PostgresDialect, secret []byte) (string, []any, error) {
	c := &compiler{t: t, dialect: d, args: []any{secret}}
	groups := make([]string, len(q.GroupBy))
	inner := make([]string, len(q.GroupBy))
	for i, g := range q.GroupBy {
		groups[i] = c.column(g)
		inner[i] = fmt.Sprintf("%s%d", groupAlias, i)
	}
	unit := c.column(t.PrivacyUnit)
	var where string
	if q.Where != nil {
		c.pred(q.Where)
		where = " WHERE " + c.sb.String()
	}
	if c.err != nil {
		return "", nil, c.err
	}
	var sb strings.Builder
	sb.WriteString("SELECT ")
	for _, g := range inner {
		sb.WriteString(g + ", ")
	}
	if q.Agg == ir.CountDistinct {
		sb.WriteString("COUNT(" + unitAlias + ")")
	} else {
		sb.WriteString("COALESCE(SUM(" + rowsAlias + "), 0)::int8")
	}
	sb.WriteString(", COUNT(" + unitAlias + "), (COALESCE(SUM(" + keyAlias + "), 0) % " + keyModulus + ")::int8 FROM (SELECT ")
	for i, g := range groups {
		sb.WriteString(g + " AS " + inner[i] + ", ")
	}
	sb.WriteString(unit + " AS " + unitAlias + ", COUNT(*) AS " + rowsAlias +
		", ('x' || encode(substr(hmac(convert_to((" + unit + ")::text, 'UTF8'), $1::bytea, 'sha256'), 1, 4), 'hex'))::bit(32)::int8 AS " + keyAlias)
	sb.WriteString(" FROM " + pglex.QuoteIdentAlways(t.Name) + where + " GROUP BY ")
	for _, g := range groups {
		sb.WriteString(g + ", ")
	}
	sb.WriteString(unit + ") AS cw_units")
	if len(inner) > 0 {
		sb.WriteString(" GROUP BY " + strings.Join(inner, ", "))
	}
	return sb.String(), c.args, nil
}
