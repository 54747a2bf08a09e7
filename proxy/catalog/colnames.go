package catalog

import "countwall/pglex"

// nameColumns gives each item of each select list that has no alias the
// name PostgreSQL gives it (its FigureColname: a column's name, a
// function's name, the type of a cast of a constant, "?column?" for an
// operator), as an AS alias: SQLite would name it by its translated text,
// and clients print the names (pgcli's \d, psql's headers) or read columns
// by them. In the outermost list, a value cast to a reg type is shown by
// its name, as PostgreSQL prints a regclass; and booleans marks the
// columns PostgreSQL types as boolean (a comparison, EXISTS): SQLite has
// no boolean values to tell them by.
func nameColumns(toks []pglex.Token) (_ []pglex.Token, booleans map[int]bool) {
	inserts := map[int][]pglex.Token{}
	booleans = map[int]bool{}
	outermost := true
	for i, t := range toks {
		if t.Kind != pglex.Word || t.Text != "select" {
			continue
		}
		positional := outermost
		for k, item := range selectItems(toks, i+1) {
			span := toks[item[0]:item[1]]
			name, aliased := aliasOf(span)
			if !aliased {
				name, _ = figure(span)
			}
			if name == "" {
				positional = false // * or x.*: the positions that follow are unknown
				continue
			}
			expr := stripAlias(span)
			var add []pglex.Token
			if outermost && castsToRegType(expr) {
				add = append(add, pglex.Token{Kind: pglex.Op, Text: "::"}, pglex.Token{Kind: pglex.Word, Text: "text"})
			}
			if !aliased {
				add = append(add, pglex.Token{Kind: pglex.Word, Text: "as"}, pglex.Token{Kind: pglex.QuotedIdent, Text: name})
			}
			if len(add) > 0 {
				inserts[item[0]+len(expr)] = add
			}
			if positional && isBoolean(expr) {
				booleans[k] = true
			}
		}
		outermost = false
	}
	if len(inserts) == 0 {
		return toks, booleans
	}
	out := make([]pglex.Token, 0, len(toks)+3*len(inserts))
	for i := 0; i <= len(toks); i++ {
		out = append(out, inserts[i]...)
		if i < len(toks) {
			out = append(out, toks[i])
		}
	}
	return out, booleans
}

// castsToRegType says whether an expression ends in a cast to a reg type.
func castsToRegType(expr []pglex.Token) bool {
	i := castAt(expr)
	return i >= 0 && typeOnly(expr[i+1:]) && regTypes[castTypeName(expr[i+1:])]
}

// listEnds end a select list at its own depth.
var listEnds = map[string]bool{
	"from": true, "where": true, "group": true, "having": true, "window": true, "order": true, "limit": true,
	"offset": true, "fetch": true, "for": true, "union": true, "intersect": true, "except": true, "into": true,
}

// selectItems are the [start, end) token spans of the select list that
// starts at i.
func selectItems(toks []pglex.Token, i int) [][2]int {
	if i < len(toks) && toks[i].Kind == pglex.Word && (toks[i].Text == "distinct" || toks[i].Text == "all") {
		i++
		if i < len(toks) && toks[i].Kind == pglex.Word && toks[i].Text == "on" {
			i = skipGroup(toks, i+1)
		}
	}
	var items [][2]int
	start, depth := i, 0
	for ; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.Kind == pglex.Op && (t.Text == "(" || t.Text == "["):
			depth++
			continue
		case t.Kind == pglex.Op && (t.Text == ")" || t.Text == "]"):
			depth--
			if depth >= 0 {
				continue
			}
		case depth > 0:
			continue
		case t.Kind == pglex.Op && t.Text == ",":
			items = append(items, [2]int{start, i})
			start = i + 1
			continue
		case !(t.Kind == pglex.Word && listEnds[t.Text]) && !(t.Kind == pglex.Op && t.Text == ";"):
			continue
		}
		break
	}
	if i > start {
		items = append(items, [2]int{start, i})
	}
	return items
}

// skipGroup returns the index after the parenthesised group at i.
func skipGroup(toks []pglex.Token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		switch toks[i].Text {
		case "(", "[":
			depth++
		case ")", "]":
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// notAliases are words that end an expression rather than name it.
var notAliases = map[string]bool{"end": true, "null": true, "true": true, "false": true, "unknown": true}

// aliasOf is an item's alias: AS name, or a bare name after an expression.
func aliasOf(item []pglex.Token) (string, bool) {
	n := len(item)
	if n < 2 {
		return "", false
	}
	last, prev := item[n-1], item[n-2]
	if last.Kind != pglex.Word && last.Kind != pglex.QuotedIdent {
		return "", false
	}
	if prev.Kind == pglex.Word && prev.Text == "as" {
		return last.Text, true
	}
	if last.Kind == pglex.Word && (notAliases[last.Text] || sqlKeywords[last.Text]) {
		return "", false
	}
	if i := castAt(item); i >= 0 && typeOnly(item[i+1:]) {
		return "", false
	}
	switch prev.Kind {
	case pglex.Word:
		return last.Text, !sqlKeywords[prev.Text] || notAliases[prev.Text]
	case pglex.QuotedIdent, pglex.String, pglex.Number, pglex.Param:
		return last.Text, true
	case pglex.Op:
		return last.Text, prev.Text == ")" || prev.Text == "]"
	}
	return "", false
}

// stripAlias is an item without its alias.
func stripAlias(item []pglex.Token) []pglex.Token {
	if _, ok := aliasOf(item); !ok {
		return item
	}
	if n := len(item); n >= 2 && item[n-2].Kind == pglex.Word && item[n-2].Text == "as" {
		return item[:n-2]
	}
	return item[:len(item)-1]
}

// castAt is the position of the last :: at depth 0, or -1.
func castAt(item []pglex.Token) int {
	at := -1
	depthZeroEach(item, func(i int, t pglex.Token) {
		if t.Kind == pglex.Op && t.Text == "::" {
			at = i
		}
	})
	return at
}

// typeOnly says whether toks are only a type name: a word, or the words
// of a multi-word type (double precision), after a schema, with modifiers
// in parentheses and array brackets.
func typeOnly(toks []pglex.Token) bool {
	depth := 0
	var words []string
	for _, t := range toks {
		switch {
		case t.Text == "(" || t.Text == "[":
			depth++
		case t.Text == ")" || t.Text == "]":
			depth--
		case depth > 0:
		case t.Text == ".":
			words = nil
		case t.Kind == pglex.QuotedIdent || t.Kind == pglex.Word:
			if len(words) > 0 && !typeWordFollows(words, t.Text) {
				return false
			}
			words = append(words, t.Text)
		default:
			return false
		}
	}
	return len(words) > 0
}

// depthZeroEach visits the tokens of item outside any parentheses.
func depthZeroEach(item []pglex.Token, visit func(i int, t pglex.Token)) {
	depth := 0
	for i, t := range item {
		if t.Kind == pglex.Op {
			switch t.Text {
			case "(", "[":
				depth++
				continue
			case ")", "]":
				depth--
				continue
			}
		}
		if depth == 0 {
			visit(i, t)
		}
	}
}
