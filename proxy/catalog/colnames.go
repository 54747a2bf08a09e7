package catalog

import "countwall/pglex"

// PostgreSQL names an output column that has no alias after what it
// computes: a function call after the function (current_database,
// version), an SQL function written without parentheses after its keyword
// (current_user). SQLite names it after its own text, which for a function
// the catalog answers with a constant is the constant ('countwall'). So
// the outermost select list's calls are named here, PostgreSQL's way.

// sqlValueFunctions are the functions written without parentheses.
var sqlValueFunctions = map[string]bool{
	"current_user": true, "session_user": true, "user": true, "current_role": true,
	"current_catalog": true, "current_schema": true,
}

// outputNames is the name PostgreSQL gives each item of the statement's
// outermost select list that is a call without an alias; "" for any other
// item, which keeps the name SQLite gives it.
func outputNames(toks []pglex.Token) []string {
	if len(toks) == 0 || toks[0].Kind != pglex.Word || toks[0].Text != "select" {
		return nil
	}
	var names []string
	depth, start := 0, 1
	for i := 1; i <= len(toks); i++ {
		if i < len(toks) {
			t := toks[i]
			switch {
			case t.Kind == pglex.Op && (t.Text == "(" || t.Text == "["):
				depth++
				continue
			case t.Kind == pglex.Op && (t.Text == ")" || t.Text == "]"):
				depth--
				continue
			case depth > 0:
				continue
			case t.Kind == pglex.Word && listEnds[t.Text], t.Kind == pglex.Op && t.Text == ";":
			case t.Kind == pglex.Op && t.Text == ",":
				names = append(names, callName(toks[start:i]))
				start = i + 1
				continue
			default:
				continue
			}
		}
		return append(names, callName(toks[start:i]))
	}
	return names
}

// listEnds are the words that end a select list.
var listEnds = map[string]bool{"from": true, "where": true, "group": true, "order": true, "limit": true,
	"offset": true, "union": true, "except": true, "intersect": true, "having": true, "window": true, "into": true, "for": true}

// callName is the name of an item that is [schema.]f(...) or an SQL value
// function; "" for anything else.
func callName(item []pglex.Token) string {
	if len(item) > 2 && item[0].Kind == pglex.Word && item[1].Kind == pglex.Op && item[1].Text == "." {
		item = item[2:]
	}
	switch {
	case len(item) == 1 && item[0].Kind == pglex.Word && sqlValueFunctions[item[0].Text]:
		return item[0].Text
	case len(item) >= 3 && item[0].Kind == pglex.Word && !sqlKeywords[item[0].Text] &&
		item[1].Kind == pglex.Op && item[1].Text == "(" && closes(item, 1) == len(item)-1:
		return item[0].Text
	}
	return ""
}

// closes is the index of the parenthesis closing the one at open, or -1.
func closes(toks []pglex.Token, open int) int {
	depth := 0
	for j := open; j < len(toks); j++ {
		if toks[j].Kind != pglex.Op {
			continue
		}
		switch toks[j].Text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}
