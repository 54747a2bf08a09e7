package snapshot

import (
	"slices"
	"strconv"
	"strings"

	"countwall/ir"
	"countwall/planner/plan"
)

// grouping maps a snapshot column's value codes to the groups the column's
// catalog type reads them as (plan/groupvalue.go), numbered in the order the SQL's
// ORDER BY gives them.
type grouping struct {
	group  []uint32        // value code -> group number
	values []ir.GroupValue // group number -> rendered value
	text   bool            // a text column's grouping: groups are texts
}

// grouping returns the column's grouping under a catalog type, computed once
// per snapshot.
func (c *snapColumn) grouping(typ ir.ColumnType) *grouping {
	text := typ == ir.TypeText
	c.groupingOnce[b2u(text)].Do(func() { c.groupings[b2u(text)] = buildGrouping(c.values, text) })
	return c.groupings[b2u(text)]
}

func buildGrouping(values []dictValue, text bool) *grouping {
	g := &grouping{group: make([]uint32, len(values)), text: text}
	if !text {
		// values are in SQLite's order: NULL, numbers ascending (an integer
		// and an equal real side by side), then text and blobs. NULL is
		// group 0, and text and blobs join it.
		g.values = []ir.GroupValue{{Null: true}}
		for code, v := range values {
			if v.class != classInt && v.class != classReal {
				continue
			}
			if code > 0 && len(g.values) > 1 && isNumber(values[code-1]) && compareNumbers(values[code-1], v) == 0 {
				g.group[code] = uint32(len(g.values) - 1)
				continue
			}
			g.group[code] = uint32(len(g.values))
			g.values = append(g.values, v.groupValue())
		}
		return g
	}
	// Text: NULL is group 0, then the distinct texts in byte order.
	byText := map[string][]int{}
	var texts []string
	nulls := false
	for code, v := range values {
		s, ok := plan.GroupText(v.any())
		if !ok {
			nulls = true
			continue
		}
		if _, seen := byText[s]; !seen {
			texts = append(texts, s)
		}
		byText[s] = append(byText[s], code)
	}
	slices.Sort(texts)
	if nulls {
		g.values = append(g.values, ir.GroupValue{Null: true})
	}
	for _, s := range texts {
		for _, code := range byText[s] {
			g.group[code] = uint32(len(g.values))
		}
		g.values = append(g.values, ir.GroupValue{Text: s})
	}
	return g
}

// groupValue renders a value as readCells renders what SQLite returns.
func (v dictValue) groupValue() ir.GroupValue {
	switch v.class {
	case classNull:
		return ir.GroupValue{Null: true}
	case classInt:
		return ir.GroupValue{Text: strconv.FormatInt(v.i, 10)}
	case classReal:
		return ir.GroupValue{Text: strconv.FormatFloat(v.f, 'g', -1, 64)}
	}
	return ir.GroupValue{Text: v.s}
}

// groupColumn is a GROUP BY column of the snapshot with the grouping its
// catalog type reads it by.
type groupColumn struct {
	*snapColumn
	grouping *grouping
}

// groupColumns are q's GROUP BY columns in the snapshot, each with the
// grouping its catalog type reads it by; ok is false when one is missing.
func (snap *Table) groupColumns(t *ir.Table, q *ir.Query) ([]groupColumn, bool) {
	groups := make([]groupColumn, len(q.GroupBy))
	for i, g := range q.GroupBy {
		col := snap.columns[strings.ToLower(g)]
		cat := t.Columns[strings.ToLower(g)]
		if col == nil || cat == nil || col.collated {
			return nil, false
		}
		groups[i] = groupColumn{snapColumn: col, grouping: col.grouping(cat.Type)}
	}
	return groups, true
}
