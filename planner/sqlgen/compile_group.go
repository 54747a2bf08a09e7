package sqlgen

import (
	"countwall/ir"
	"countwall/planner/plan"
	"strings"
)

// groupSQL is a GROUP BY column's expression in SQLite SQL, given its
// quoted reference.
func groupSQL(col *ir.Column, ref string) string {
	if col.Type == ir.TypeText {
		return plan.GroupTextFunc + "(" + ref + ")"
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
