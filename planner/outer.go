package planner

import (
	"strings"

	"countwall/ir"
	"countwall/pgtypes"
)

// Outer is a statement that carries a query the Engine answers as itself
// and a front end then handles: COPY (query) TO STDOUT, DECLARE name
// CURSOR FOR query, PREPARE name AS query. Exactly one of Copy, Cursor and
// Prepare is set.
type Outer struct {
	Query   string      // the query's text, cut from the statement
	Copy    *ir.CopyOut // COPY's format
	Cursor  string      // the cursor DECLARE names
	Hold    bool        // DECLARE ... WITH HOLD
	Prepare string      // the name PREPARE gives
	// Types are the parameter types PREPARE declares, in order; the
	// query's use types the rest.
	Types []pgtypes.OID
}

// ReadOuter reads sql as one of those statements, deciding by its first
// word before lexing anything, so that every other statement costs one
// look at its start. false for any other statement, and for one of those
// whose form is refused: the planner refuses that text itself, saying why.
func ReadOuter(sql string) (Outer, bool) {
	word := strings.TrimLeft(sql, " \t\r\n")
	if i := strings.IndexAny(word, " \t\r\n(\";"); i >= 0 {
		word = word[:i]
	}
	switch strings.ToLower(word) {
	case "copy":
		query, out, _, err := readCopyOut(sql)
		return Outer{Query: query, Copy: &out}, err == nil && query != ""
	case "declare":
		name, query, hold, _, err := readDeclare(sql)
		return Outer{Query: query, Cursor: name, Hold: hold}, err == nil && query != ""
	case "prepare":
		p, _, err := readPrepare(sql)
		return Outer{Query: p.query, Prepare: p.name, Types: p.types}, err == nil && p.query != ""
	}
	return Outer{}, false
}
