package planner

import (
	"errors"
	"slices"
	"strings"

	"countwall/pgerror"
	"countwall/pglex"
	"countwall/pgtypes"
)

// Drivers and BI tools write casts (x::int, CAST(x AS VARCHAR)) and arrays
// (col = ANY($1), col = ANY(ARRAY[1,2]), col = ANY('{a,b}')), which the
// MySQL grammar has no words for. Before the statement is rendered for the
// parser, the tokens of these forms are rewritten into calls of functions
// only this rewrite writes, which the planner reads back:
//
//	x::type, CAST(x AS type)      countwall_cast(x, `type`)
//	op ANY (list), op ALL (list)  op countwall_any(v1, v2, ...), op countwall_all(...)
//	op ANY ($n[::type[]])         op countwall_any_param($n[, `type`])
//	op ANY (NULL[::type[]])       op countwall_any_param(NULL[, `type`])
//	op ANY ('{}'::type[])         op countwall_any_param('{}', `type`)
//
// type is the type's canonical name (int4, varchar(10), float8), which the
// grammar reads as a column name. A '{...}' constant or an ARRAY[...] is
// spread into its elements here, so that each is one constant of the
// statement's shape, as in an IN list; a parameter's elements are known at
// Bind only. A NULL array, and an empty one of a type the column must be
// compared with, have no elements to carry the type: they are written as
// a parameter is, with the array in its place.
const (
	castCall     = "countwall_cast"
	anyCall      = "countwall_any"
	allCall      = "countwall_all"
	anyParamCall = "countwall_any_param"
	allParamCall = "countwall_all_param"
	internalCall = "countwall_"
)

// rewriteForms rewrites a SELECT's casts and arrays; toks itself when it
// has none.
func rewriteForms(toks []pglex.Token) ([]pglex.Token, error) {
	if !hasForms(toks) {
		return toks, nil
	}
	return rewriteTokens(signedPositions(toks))
}

// signedPositions keeps +1 from reading as a select-list position in
// GROUP BY and ORDER BY. PostgreSQL reads only an integer constant there
// as a position (GROUP BY 1); +1 is an expression, a constant, but the
// MySQL grammar folds it into 1. A unary plus before a number that starts
// an item of either list is written 0 +, the same value, which the grammar
// keeps an expression.
func signedPositions(toks []pglex.Token) []pglex.Token {
	var out []pglex.Token
	depth, listDepth, itemStart := 0, -1, false
	for i, t := range toks {
		switch {
		case isOp(t, "(") || isOp(t, "["):
			depth++
		case isOp(t, ")") || isOp(t, "]"):
			depth--
			if depth < listDepth {
				listDepth = -1
			}
		case t.Kind == pglex.Word && depth == listDepth && listEnds[t.Text], isOp(t, ";"):
			listDepth = -1
		}
		if itemStart && isOp(t, "+") && i+1 < len(toks) && toks[i+1].Kind == pglex.Number {
			if out == nil {
				out = append(make([]pglex.Token, 0, len(toks)+1), toks[:i]...)
			}
			out = append(out, pglex.Token{Kind: pglex.Number, Text: "0", Raw: "0", Pos: t.Pos})
		}
		if out != nil {
			out = append(out, t)
		}
		itemStart = (isWord(t, "by") && i > 0 && (isWord(toks[i-1], "group") || isWord(toks[i-1], "order"))) ||
			(isOp(t, ",") && depth == listDepth)
		if isWord(t, "by") && itemStart {
			listDepth = depth
		}
	}
	if out == nil {
		return toks
	}
	return out
}

// listEnds are the words that end a GROUP BY or ORDER BY list.
var listEnds = map[string]bool{"having": true, "order": true, "limit": true, "offset": true, "fetch": true,
	"for": true, "window": true, "union": true, "intersect": true, "except": true}

func hasForms(toks []pglex.Token) bool {
	for i, t := range toks {
		switch {
		case t.Kind == pglex.Word && t.Text == "distinct" && i > 0 && (isWord(toks[i-1], "is") || isWord(toks[i-1], "not")):
			return true
		case t.Kind == pglex.Op && (t.Text == "::" || t.Text == "["):
			return true
		case t.Kind == pglex.Op && t.Text == "+" && i > 0 && (isWord(toks[i-1], "by") || isOp(toks[i-1], ",")):
			return true
		case t.Kind == pglex.Word && (t.Text == "cast" || t.Text == "any" || t.Text == "some" || t.Text == "all" || strings.HasPrefix(t.Text, internalCall)):
			return true
		}
	}
	return false
}

// rewriteTokens is rewriteForms on tokens that may hold its forms.
func rewriteTokens(toks []pglex.Token) ([]pglex.Token, error) {
	out := make([]pglex.Token, 0, len(toks)+8)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		opens := i+1 < len(toks) && isOp(toks[i+1], "(")
		switch {
		case t.Kind == pglex.Word && strings.HasPrefix(t.Text, internalCall) && opens:
			return nil, pgerror.Errorf(pgerror.UndefinedFunction, "function %s does not exist", t.Text)
		case t.Kind == pglex.Word && t.Text == "cast" && opens:
			end, err := closing(toks, i+1)
			if err != nil {
				return nil, err
			}
			operand, typ, err := castParts(toks[i+2 : end])
			if err != nil {
				return nil, err
			}
			if operand, err = rewriteTokens(operand); err != nil {
				return nil, err
			}
			out, i = appendCast(out, operand, typ, t), end
		case isOp(t, "::"):
			start, err := primaryStart(out)
			if err != nil {
				return nil, err
			}
			typ, n, err := readType(toks[i+1:])
			if err != nil {
				return nil, err
			}
			operand := append([]pglex.Token(nil), out[start:]...)
			out, i = appendCast(out[:start], operand, typ, t), i+n
		case t.Kind == pglex.Word && (t.Text == "any" || t.Text == "some" || t.Text == "all") && opens && len(out) > 0 && isComparison(out[len(out)-1]):
			end, err := closing(toks, i+1)
			if err != nil {
				return nil, err
			}
			if out, err = appendQuantified(out, t, toks[i+2:end]); err != nil {
				return nil, err
			}
			i = end
		case isOp(t, "["):
			return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "arrays are supported only as col = ANY(array) and col <> ALL(array)")
		case t.Kind == pglex.Word && t.Text == "is" && distinctFrom(toks[i+1:]) > 0:
			n := distinctFrom(toks[i+1:])
			var err error
			if out, err = appendNotDistinct(out, t, n == 2); err != nil {
				return nil, err
			}
			i += n
		default:
			out = append(out, t)
		}
	}
	return out, nil
}

func isComparison(t pglex.Token) bool {
	if t.Kind != pglex.Op {
		return false
	}
	switch t.Text {
	case "=", "<>", "<", "<=", ">", ">=":
		return true
	}
	return false
}

// closing is the index of the bracket closing the one at open.
func closing(toks []pglex.Token, open int) (int, error) {
	want := map[string]string{"(": ")", "[": "]"}[toks[open].Text]
	depth := 0
	for j := open; j < len(toks); j++ {
		switch {
		case isOp(toks[j], "(") || isOp(toks[j], "["):
			depth++
		case isOp(toks[j], ")") || isOp(toks[j], "]"):
			depth--
			if depth == 0 {
				if toks[j].Text != want {
					return 0, pgerror.Errorf(pgerror.SyntaxError, "syntax error at or near %s", pglex.Near(toks[j]))
				}
				return j, nil
			}
		}
	}
	return 0, pgerror.Errorf(pgerror.SyntaxError, "syntax error at end of input")
}

// castParts splits the inside of CAST( ... ) at its AS.
func castParts(inner []pglex.Token) (operand []pglex.Token, typ string, err error) {
	depth, as := 0, -1
	for j, t := range inner {
		switch {
		case isOp(t, "(") || isOp(t, "["):
			depth++
		case isOp(t, ")") || isOp(t, "]"):
			depth--
		case depth == 0 && t.Kind == pglex.Word && t.Text == "as":
			as = j
		}
	}
	if as <= 0 {
		return nil, "", pgerror.Errorf(pgerror.SyntaxError, "CAST needs a value and a type: CAST(x AS type)")
	}
	typ, n, err := readType(inner[as+1:])
	if err != nil {
		return nil, "", err
	}
	if as+1+n != len(inner) {
		return nil, "", pgerror.Errorf(pgerror.SyntaxError, "syntax error at or near %s", pglex.Near(inner[as+1+n]))
	}
	return inner[:as], typ, nil
}

// primaryStart is where the operand of a :: written after out starts: a
// constant, a parameter, a (qualified) name, a call or a parenthesised
// expression.
func primaryStart(out []pglex.Token) (int, error) {
	end := len(out) - 1
	if end < 0 {
		return 0, pgerror.Errorf(pgerror.SyntaxError, "syntax error at or near \"::\"")
	}
	last := out[end]
	switch {
	case isOp(last, ")"):
		depth := 0
		for j := end; j >= 0; j-- {
			switch {
			case isOp(out[j], ")"):
				depth++
			case isOp(out[j], "("):
				depth--
			}
			if depth == 0 {
				if j > 0 && out[j-1].Kind == pglex.Word && (!pglex.IsReserved(out[j-1].Text) || strings.HasPrefix(out[j-1].Text, internalCall)) {
					j--
				}
				return j, nil
			}
		}
	case last.Kind == pglex.Number || last.Kind == pglex.String || last.Kind == pglex.Param:
		return end, nil
	case last.Kind == pglex.Word || last.Kind == pglex.QuotedIdent:
		j := end
		for j >= 2 && isOp(out[j-1], ".") && (out[j-2].Kind == pglex.Word || out[j-2].Kind == pglex.QuotedIdent) {
			j -= 2
		}
		return j, nil
	}
	return 0, pgerror.Errorf(pgerror.SyntaxError, "syntax error at or near \"::\"")
}

// appendCast appends castCall(operand, `typ`); at names the cast in errors.
func appendCast(out, operand []pglex.Token, typ string, at pglex.Token) []pglex.Token {
	out = append(out, word(castCall, at), op("(", at))
	out = append(out, operand...)
	return append(out, op(",", at), pglex.Token{Kind: pglex.QuotedIdent, Text: typ, Raw: typ, Pos: at.Pos}, op(")", at))
}

func word(text string, at pglex.Token) pglex.Token {
	return pglex.Token{Kind: pglex.Word, Text: text, Raw: at.Raw, Pos: at.Pos}
}

func op(text string, at pglex.Token) pglex.Token {
	return pglex.Token{Kind: pglex.Op, Text: text, Raw: text, Pos: at.Pos}
}

// appendQuantified appends the call an op ANY|SOME|ALL (inner) becomes.
func appendQuantified(out []pglex.Token, q pglex.Token, inner []pglex.Token) ([]pglex.Token, error) {
	if len(inner) > 0 && inner[0].Kind == pglex.Word && inner[0].Text == "select" {
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "subqueries are not supported")
	}
	array, elemType, err := arrayCast(withoutParens(inner))
	if err != nil {
		return nil, err
	}
	array = withoutParens(array)
	all := q.Text == "all"
	if len(array) == 1 && (array[0].Kind == pglex.Param || isWord(array[0], "null")) {
		return appendWholeArray(out, q, array[0], elemType), nil
	}
	elems, err := arrayElements(array, elemType)
	if err != nil {
		return nil, err
	}
	if elemType == "" && unknownElements(array, elems) {
		elemType = "text" // ARRAY['a', 'b'] is text[], as PostgreSQL resolves it
	}
	if len(elems) == 0 && elemType != "" {
		empty := pglex.Token{Kind: pglex.String, Text: "{}", Raw: "'{}'", Pos: q.Pos}
		return appendWholeArray(out, q, empty, elemType), nil
	}
	out = append(out, word(pick(all, allCall, anyCall), q), op("(", q))
	for k, e := range elems {
		if k > 0 {
			out = append(out, op(",", q))
		}
		if elemType != "" {
			e = appendCast(nil, e, elemType, e[0])
		}
		out = append(out, e...)
	}
	return append(out, op(")", q)), nil
}

// appendWholeArray appends the call of an array known as a whole: a
// parameter, NULL, or an empty constant, with the type of its elements if
// one was given.
func appendWholeArray(out []pglex.Token, q, array pglex.Token, elemType string) []pglex.Token {
	out = append(out, word(pick(q.Text == "all", allParamCall, anyParamCall), q), op("(", q), array)
	if elemType != "" {
		out = append(out, op(",", q), pglex.Token{Kind: pglex.QuotedIdent, Text: elemType, Raw: elemType, Pos: q.Pos})
	}
	return append(out, op(")", q))
}

// withoutParens is toks without the parentheses that enclose all of it.
func withoutParens(toks []pglex.Token) []pglex.Token {
	for len(toks) > 2 && isOp(toks[0], "(") && matchingParen(toks, 0) == len(toks)-1 {
		toks = toks[1 : len(toks)-1]
	}
	return toks
}

// unknownElements reports whether an ARRAY[...] has only elements of no
// type of their own (quoted constants and NULLs), which PostgreSQL then
// types as text.
func unknownElements(array []pglex.Token, elems [][]pglex.Token) bool {
	if len(array) == 0 || !isWord(array[0], "array") {
		return false
	}
	for _, e := range elems {
		if len(e) != 1 || !(e[0].Kind == pglex.String || isWord(e[0], "null")) {
			return false
		}
	}
	return true
}

// arrayCast splits an array expression from the array type it is cast to
// (x::int[], CAST(x AS int[])): the element type, or "" without a cast.
func arrayCast(inner []pglex.Token) ([]pglex.Token, string, error) {
	if len(inner) > 2 && inner[0].Kind == pglex.Word && inner[0].Text == "cast" && isOp(inner[1], "(") {
		if end, err := closing(inner, 1); err == nil && end == len(inner)-1 {
			operand, typ, err := castParts(inner[2:end])
			if err != nil {
				return nil, "", err
			}
			return arrayTyped(operand, typ)
		}
	}
	depth := 0
	for j, t := range inner {
		switch {
		case isOp(t, "(") || isOp(t, "["):
			depth++
		case isOp(t, ")") || isOp(t, "]"):
			depth--
		case depth == 0 && isOp(t, "::"):
			typ, n, err := readType(inner[j+1:])
			if err != nil {
				return nil, "", err
			}
			if j+1+n != len(inner) {
				return nil, "", errArrayForm
			}
			return arrayTyped(inner[:j], typ)
		}
	}
	return inner, "", nil
}

func arrayTyped(array []pglex.Token, typ string) ([]pglex.Token, string, error) {
	elem, ok := strings.CutSuffix(typ, "[]")
	if !ok {
		return nil, "", pgerror.Errorf(pgerror.WrongObjectType, "op ANY/ALL (array) requires array on right side")
	}
	return array, elem, nil
}

var errArrayForm = pgerror.Errorf(pgerror.FeatureNotSupported,
	"ANY and ALL take an array: ARRAY[v1, v2], a constant '{v1,v2}' or a parameter $n, each optionally cast to an array type")

// arrayElements are the elements of ARRAY[...] or a '{...}' constant, each
// as the tokens of one value (NULL as the word null).
func arrayElements(array []pglex.Token, elemType string) ([][]pglex.Token, error) {
	switch {
	case len(array) == 1 && array[0].Kind == pglex.String:
		vals, err := pgtypes.ParseArray(array[0].Text)
		switch {
		case errors.Is(err, pgtypes.ErrNestedArray):
			return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "multidimensional arrays are not supported in ANY and ALL")
		case err != nil:
			return nil, arrayError(err, "a '{...}' constant")
		}
		elems := make([][]pglex.Token, len(vals))
		for k, v := range vals {
			if v == nil {
				elems[k] = []pglex.Token{word("null", array[0])}
			} else {
				elems[k] = []pglex.Token{{Kind: pglex.String, Text: *v, Raw: array[0].Raw, Pos: array[0].Pos}}
			}
		}
		return elems, nil
	case len(array) >= 3 && array[0].Kind == pglex.Word && array[0].Text == "array" && isOp(array[1], "["):
		end, err := closing(array, 1)
		if err != nil || end != len(array)-1 {
			return nil, errArrayForm
		}
		switch {
		case end == 2 && elemType == "":
			return nil, pgerror.Errorf(pgerror.IndeterminateDatatype, "cannot determine type of empty array").
				WithHint("Cast it to the type you want, such as ARRAY[]::integer[].")
		case end == 2:
			return nil, nil
		}
		return arrayItems(array[2:end])
	}
	return nil, errArrayForm
}

// arrayItems splits ARRAY[...]'s inside at its commas, each item rewritten.
func arrayItems(inner []pglex.Token) ([][]pglex.Token, error) {
	var items [][]pglex.Token
	depth, start := 0, 0
	for j := 0; j <= len(inner); j++ {
		if j < len(inner) {
			t := inner[j]
			switch {
			case isOp(t, "[") && j == start:
				return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "multidimensional arrays are not supported in ANY and ALL")
			case isOp(t, "(") || isOp(t, "["):
				depth++
				continue
			case isOp(t, ")") || isOp(t, "]"):
				depth--
				continue
			case !(depth == 0 && isOp(t, ",")):
				continue
			}
		}
		if j == start {
			return nil, pgerror.Errorf(pgerror.SyntaxError, "syntax error in ARRAY[...]: an element is missing")
		}
		item, err := rewriteTokens(inner[start:j])
		if err != nil {
			return nil, err
		}
		items, start = append(items, item), j+1
	}
	return items, nil
}

// notDistinctRaw marks the operator IS [NOT] DISTINCT FROM is rewritten
// into: MySQL's null-safe equality <=>, which the grammar parses and the
// planner reads as IS NOT DISTINCT FROM (notdistinct.go). A <=> the
// analyst writes has its own text as Raw and is refused when rendered.
const notDistinctRaw = "IS NOT DISTINCT FROM"

// distinctFrom is how many tokens after IS make DISTINCT FROM (2) or NOT
// DISTINCT FROM (3); 0 for anything else.
func distinctFrom(rest []pglex.Token) int {
	switch {
	case len(rest) >= 2 && isWord(rest[0], "distinct") && isWord(rest[1], "from"):
		return 2
	case len(rest) >= 3 && isWord(rest[0], "not") && isWord(rest[1], "distinct") && isWord(rest[2], "from"):
		return 3
	}
	return 0
}

// appendNotDistinct appends the null-safe equality after the operand out
// ends with; IS DISTINCT FROM (distinct) puts NOT before the operand,
// which binds more loosely than the comparison: NOT col <=> v.
func appendNotDistinct(out []pglex.Token, at pglex.Token, distinct bool) ([]pglex.Token, error) {
	start, err := primaryStart(out)
	if err != nil {
		return nil, pgerror.Errorf(pgerror.SyntaxError, "syntax error at or near \"IS\"")
	}
	if distinct {
		out = slices.Insert(out, start, word("not", at))
	}
	return append(out, pglex.Token{Kind: pglex.Op, Text: "<=>", Raw: notDistinctRaw, Pos: at.Pos}), nil
}
