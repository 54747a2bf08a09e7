package catalog

import (
	"strings"

	"countwall/pglex"
)

// Strengths of a figured name, as PostgreSQL's FigureColnameInternal ranks
// them: a cast names a column by its type only when its operand gives no
// better name, a CASE by its ELSE only when that is a real name.
const (
	noName   = 0 // "?column?"
	weakName = 1 // a type's name, "case"
	realName = 2 // a column's or a function's name
)

// figure is the name PostgreSQL gives an unaliased select item; "" for *
// and x.*.
func figure(item []pglex.Token) (string, int) {
	n := len(item)
	if n == 0 {
		return "?column?", noName
	}
	if item[n-1].Text == "*" && item[n-1].Kind == pglex.Op {
		return "", noName
	}
	name, strength := figureExpr(item)
	if strength == noName {
		return "?column?", noName
	}
	return name, strength
}

func figureExpr(item []pglex.Token) (string, int) {
	n := len(item)
	first := item[0]
	// ( expr ) and ( SELECT ... ): the expression's or the subquery's
	// first column's name.
	if first.Text == "(" && first.Kind == pglex.Op && skipGroup(item, 0) == n {
		inner := item[1 : n-1]
		if len(inner) > 0 && inner[0].Kind == pglex.Word && inner[0].Text == "select" {
			items := selectItems(inner, 1)
			if len(items) == 0 {
				return "", noName
			}
			span := inner[items[0][0]:items[0][1]]
			if alias, ok := aliasOf(span); ok {
				return alias, realName
			}
			return figureExpr(span)
		}
		return figureExpr(inner)
	}
	if i := castAt(item); i > 0 && typeOnly(item[i+1:]) {
		name, strength := figureExpr(item[:i])
		if strength <= weakName {
			return castTypeName(item[i+1:]), weakName
		}
		return name, strength
	}
	if item[n-1].Text == "]" && item[n-1].Kind == pglex.Op {
		if open := openingBracket(item); open > 0 {
			return figureExpr(item[:open])
		}
	}
	if first.Kind == pglex.Word && first.Text == "case" && item[n-1].Kind == pglex.Word && item[n-1].Text == "end" {
		if els := caseElse(item); els != nil {
			if name, strength := figureExpr(els); strength > weakName {
				return name, strength
			}
		}
		return "case", weakName
	}
	if hasOperator(item) {
		return "", noName
	}
	return figureTerm(item)
}

// figureTerm names a call, a column reference or a constant.
func figureTerm(item []pglex.Token) (string, int) {
	n := len(item)
	first := item[0]
	if first.Kind == pglex.Word && n > 1 && item[1].Text == "(" {
		switch first.Text {
		case "exists", "array", "row":
			return first.Text, realName
		case "cast":
			return figureCast(item)
		case "trim":
			return trimName(item), realName
		}
		if !sqlKeywords[first.Text] && callEnds(item, 1) {
			return first.Text, realName
		}
		return "", noName
	}
	if first.Kind == pglex.Word && first.Text == "array" {
		return "array", realName
	}
	// schema.f( ... ) and a.b.c
	if n >= 3 && item[n-2].Text == "." && (item[n-1].Kind == pglex.Word || item[n-1].Kind == pglex.QuotedIdent) {
		return item[n-1].Text, realName
	}
	if n >= 4 && item[1].Text == "." && item[2].Kind == pglex.Word && item[3].Text == "(" && callEnds(item, 3) {
		return item[2].Text, realName
	}
	if n == 1 {
		switch {
		case first.Kind == pglex.QuotedIdent:
			return first.Text, realName
		case first.Kind == pglex.Word && !notAliases[first.Text] && !sqlKeywords[first.Text]:
			return first.Text, realName
		}
	}
	return "", noName
}

// callEnds says whether the call opening at item[open] ends the item, but
// for a window or a filter.
func callEnds(item []pglex.Token, open int) bool {
	end := skipGroup(item, open)
	if end == len(item) {
		return true
	}
	switch item[end].Text {
	case "over", "filter", "within":
		return !hasOperator(item[end:])
	}
	return false
}

// figureCast names CAST(x AS type) as x::type.
func figureCast(item []pglex.Token) (string, int) {
	inner := item[2 : len(item)-1]
	depth, as := 0, -1
	for i, t := range inner {
		switch {
		case t.Text == "(":
			depth++
		case t.Text == ")":
			depth--
		case depth == 0 && t.Kind == pglex.Word && t.Text == "as":
			as = i
		}
	}
	if as <= 0 {
		return "", noName
	}
	if name, strength := figureExpr(inner[:as]); strength > weakName {
		return name, strength
	}
	return castTypeName(inner[as+1:]), weakName
}

func trimName(item []pglex.Token) string {
	if len(item) > 2 && item[2].Kind == pglex.Word {
		switch item[2].Text {
		case "leading":
			return "ltrim"
		case "trailing":
			return "rtrim"
		}
	}
	return "btrim"
}

// systemTypeNames are the names PostgreSQL's grammar gives the SQL
// spellings of types; a cast names its column by them.
var systemTypeNames = map[string]string{
	"int": "int4", "integer": "int4", "bigint": "int8", "smallint": "int2", "boolean": "bool", "real": "float4",
	"double precision": "float8", "float": "float8", "decimal": "numeric", "character varying": "varchar",
	"character": "bpchar", "char": "bpchar", "dec": "numeric",
}

// castTypeName is the last part of a cast's type name.
func castTypeName(toks []pglex.Token) string {
	var words []string
	depth := 0
	for _, t := range toks {
		switch {
		case t.Text == "(" || t.Text == "[":
			depth++
		case t.Text == ")" || t.Text == "]":
			depth--
		case depth > 0:
		case t.Text == ".":
			words = nil
		case t.Kind == pglex.QuotedIdent:
			words = append(words, "\x00"+t.Text) // quoted: taken as written
		default:
			words = append(words, t.Text)
		}
	}
	name := strings.Join(words, " ")
	if strings.HasPrefix(name, "\x00") {
		return strings.TrimPrefix(name, "\x00")
	}
	if sys, ok := systemTypeNames[name]; ok {
		return sys
	}
	return name
}

// caseElse is the ELSE branch of a CASE ... END item, nil without one.
func caseElse(item []pglex.Token) []pglex.Token {
	nested, els := 0, -1
	depthZeroEach(item, func(i int, t pglex.Token) {
		if t.Kind != pglex.Word || i == 0 || i == len(item)-1 {
			return
		}
		switch t.Text {
		case "case":
			nested++
		case "end":
			nested--
		case "else":
			if nested == 0 {
				els = i
			}
		}
	})
	if els < 0 {
		return nil
	}
	return item[els+1 : len(item)-1]
}

func openingBracket(item []pglex.Token) int {
	depth := 0
	for i := len(item) - 1; i >= 0; i-- {
		switch item[i].Text {
		case "]", ")":
			depth++
		case "[", "(":
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// operatorWords are the words that make an expression an operator's.
var operatorWords = map[string]bool{
	"and": true, "or": true, "not": true, "is": true, "in": true, "like": true, "ilike": true, "between": true,
	"similar": true, "isnull": true, "notnull": true, "collate": true, "at": true, "escape": true,
}

// hasOperator says whether an operator stands outside parentheses.
func hasOperator(item []pglex.Token) bool {
	found := false
	depthZeroEach(item, func(i int, t pglex.Token) {
		switch {
		case t.Kind == pglex.Op && t.Text != "." && t.Text != "::":
			found = true
		case t.Kind == pglex.Word && operatorWords[t.Text]:
			found = true
		}
	})
	return found
}

// comparisonOps are the operators whose result is boolean.
var comparisonOps = map[string]bool{
	"=": true, "<>": true, "!=": true, "<": true, ">": true, "<=": true, ">=": true,
	"~": true, "!~": true, "~*": true, "!~*": true,
}

// isBoolean says whether an item is boolean in PostgreSQL: a comparison, a
// logical operator, a test, true or false, EXISTS.
func isBoolean(item []pglex.Token) bool {
	if len(item) == 0 || item[0].Kind == pglex.Word && item[0].Text == "case" {
		return false
	}
	if len(item) == 1 && item[0].Kind == pglex.Word && (item[0].Text == "true" || item[0].Text == "false") {
		return true
	}
	if item[0].Kind == pglex.Word && item[0].Text == "exists" {
		return true
	}
	found := false
	depthZeroEach(item, func(i int, t pglex.Token) {
		switch {
		case t.Kind == pglex.Op && comparisonOps[t.Text]:
			found = true
		case t.Kind == pglex.Word && operatorWords[t.Text] && t.Text != "collate" && t.Text != "at" && t.Text != "escape":
			found = true
		}
	})
	return found
}
