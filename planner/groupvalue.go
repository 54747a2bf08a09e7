package planner

import (
	"countwall/ir"
	"database/sql/driver"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"modernc.org/sqlite"
)

// How a GROUP BY reads a stored value. SQLite keeps a column's values in
// several storage classes (a column without a declared type may hold the
// integer 1, the real 1.0, the text '1' and the blob x'31' side by side) and
// groups them apart, while the answer renders each as its text. A cell must
// be the sum of everything that maps to it, so every backend groups by the
// value as the column's catalog type reads it:
//
//   - a text column groups by the value's text: integers in decimal, reals in
//     their shortest exact form, text as stored, blobs as their bytes; so 1,
//     1.0, '1' and x'31' are one group "1", in the text's byte order;
//   - an integer or real column groups by the number, so 1 and 1.0 are one
//     group; a stored text or blob is not a number of the column's type and
//     is read as NULL (the NULL group, outside every declared domain).
//
// The SQL does this itself (groupTextFunc, numericGroupSQL), so that distinct
// units, contributor keys and contribution bounds are computed over the
// merged group; the snapshot maps its value codes the same way (grouping).

// groupTextFunc is the SQLite scalar function that renders a value as a text
// column's group reads it.
const groupTextFunc = "countwall_group_text"

// groupText is the text a text column's group reads a value as; ok is false
// for NULL.
func groupText(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case int64:
		return strconv.FormatInt(v, 10), true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	case string:
		return v, true
	case []byte:
		return string(v), true
	default:
		return fmt.Sprint(v), true
	}
}

// sqlGroupText is the body of countwall_group_text.
func sqlGroupText(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("%s takes 1 argument, got %d", groupTextFunc, len(args))
	}
	s, ok := groupText(args[0])
	if !ok {
		return nil, nil
	}
	return s, nil
}

// groupSQL is a GROUP BY column's expression in SQLite SQL, given its
// quoted reference.
func groupSQL(col *ir.Column, ref string) string {
	if col.Type == ir.TypeText {
		return groupTextFunc + "(" + ref + ")"
	}
	return "CASE WHEN typeof(" + ref + ") IN ('integer', 'real') THEN " + ref + " END"
}

// group is a GROUP BY column as the answer reads it: in SQLite, through
// groupSQL; in PostgreSQL, where a column holds one type, as it is.
func (c *compiler) group(name string) string {
	ref := c.column(name)
	col, ok := c.t.Columns[strings.ToLower(name)]
	if !ok || c.dialect != nil {
		return ref
	}
	return groupSQL(col, ref)
}

// grouping maps a snapshot column's value codes to the groups the column's
// catalog type reads them as (see above), numbered in the order the SQL's
// ORDER BY gives them.
type grouping struct {
	group  []uint32        // value code -> group number
	values []ir.GroupValue // group number -> rendered value
}

// grouping returns the column's grouping under a catalog type, computed once
// per snapshot.
func (c *snapColumn) grouping(typ ir.ColumnType) *grouping {
	text := typ == ir.TypeText
	c.groupingOnce[b2u(text)].Do(func() { c.groupings[b2u(text)] = buildGrouping(c.values, text) })
	return c.groupings[b2u(text)]
}

func buildGrouping(values []dictValue, text bool) *grouping {
	g := &grouping{group: make([]uint32, len(values))}
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
		s, ok := groupText(v.any())
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
