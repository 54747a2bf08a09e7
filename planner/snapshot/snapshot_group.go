package snapshot

import (
	"countwall/ir"
	"countwall/planner/plan"
	"slices"
)

// grouping maps a snapshot column's value codes to the groups the column's
// catalog type reads them as (see above), numbered in the order the SQL's
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

func isNumber(v dictValue) bool { return v.class == classInt || v.class == classReal }

// any is the value as the SQLite driver returns it.
func (v dictValue) any() any {
	switch v.class {
	case classNull:
		return nil
	case classInt:
		return v.i
	case classReal:
		return v.f
	case classText:
		return v.s
	}
	return []byte(v.s)
}
