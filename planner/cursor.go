package planner

import (
	"strconv"
	"strings"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/pglex"
)

// readDeclare reads DECLARE name [ASENSITIVE | INSENSITIVE] [NO SCROLL]
// CURSOR [{WITH | WITHOUT} HOLD] FOR query: the query is answered as any
// other when the cursor is declared, and FETCH reads its rows. isDeclare is
// false for any other statement; a DECLARE countwall does not take (BINARY,
// SCROLL) is refused with err.
func readDeclare(sql string) (name, query string, hold, isDeclare bool, err error) {
	toks, ok := startingWith(sql, "declare")
	if !ok {
		return "", "", false, false, nil
	}
	name, query, hold, err = declareCursor(sql, toks)
	return name, query, hold, true, err
}

// declareCursor reads a DECLARE's tokens (its first is DECLARE); the
// query's text is cut from sql, or left out when sql is "".
func declareCursor(sql string, toks []pglex.Token) (name, query string, hold bool, err error) {
	toks = withoutSemicolon(toks)
	if len(toks) < 2 || toks[1].Kind != pglex.Word && toks[1].Kind != pglex.QuotedIdent {
		return "", "", false, pgerror.Errorf(pgerror.SyntaxError, "DECLARE needs a cursor name: DECLARE name CURSOR FOR SELECT ...")
	}
	name = toks[1].Text
	i := 2
	for ; i < len(toks) && !isWord(toks[i], "for"); i++ {
		switch t := toks[i]; {
		case isWord(t, "cursor"), isWord(t, "asensitive"), isWord(t, "insensitive"), isWord(t, "without"):
		case isWord(t, "with"):
			hold = true
		case isWord(t, "hold"):
		case isWord(t, "no") && i+1 < len(toks) && isWord(toks[i+1], "scroll"):
			i++
		default:
			return "", "", false, pgerror.Errorf(pgerror.FeatureNotSupported, "DECLARE ... %s is not supported: cursors are NO SCROLL and return text", strings.ToUpper(t.Raw))
		}
	}
	if i+1 >= len(toks) {
		return "", "", false, pgerror.Errorf(pgerror.SyntaxError, "DECLARE needs a query: DECLARE name CURSOR FOR SELECT ...")
	}
	if sql == "" {
		return name, "", hold, nil
	}
	first, last := toks[i+1], toks[len(toks)-1]
	return name, sql[first.Pos : last.Pos+len(last.Raw)], hold, nil
}

// parseFetch reads FETCH and MOVE: [NEXT | FORWARD [n | ALL] | n | ALL]
// [FROM | IN] name. Directions backwards are refused: cursors are NO SCROLL.
func parseFetch(toks []pglex.Token, kind ir.ChatterKind) (ir.Statement, error) {
	rest, rows := toks[1:], int64(1)
	word := func(w string) bool {
		if len(rest) > 0 && isWord(rest[0], w) {
			rest = rest[1:]
			return true
		}
		return false
	}
	count := func() bool {
		if len(rest) > 0 && rest[0].Kind == pglex.Number {
			n, err := strconv.ParseInt(rest[0].Text, 10, 64)
			if err == nil && n >= 0 {
				rows, rest = n, rest[1:]
				return true
			}
		}
		if word("all") {
			rows = -1
			return true
		}
		return false
	}
	switch {
	case word("next"):
	case word("forward"):
		count()
	case count():
	case len(rest) > 1 && rest[0].Kind == pglex.Word && !isWord(rest[0], "from") && !isWord(rest[0], "in"):
		return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "%s %s is not supported: cursors are NO SCROLL; FETCH [FORWARD] [n | ALL] FROM name", strings.ToUpper(toks[0].Text), strings.ToUpper(rest[0].Raw))
	}
	if !word("from") {
		word("in")
	}
	if len(rest) != 1 || (rest[0].Kind != pglex.Word && rest[0].Kind != pglex.QuotedIdent) {
		return nil, pgerror.Errorf(pgerror.SyntaxError, "%s needs one cursor name: FETCH 100 FROM name", strings.ToUpper(toks[0].Text))
	}
	return &ir.Chatter{Kind: kind, Value: rest[0].Text, Rows: rows}, nil
}

// parseClose reads CLOSE {name | ALL}.
func parseClose(toks []pglex.Token) (ir.Statement, error) {
	if len(toks) != 2 || (toks[1].Kind != pglex.Word && toks[1].Kind != pglex.QuotedIdent) {
		return nil, pgerror.Errorf(pgerror.SyntaxError, "CLOSE needs one cursor name or ALL")
	}
	if isWord(toks[1], "all") {
		return &ir.Chatter{Kind: ir.ChatterClose}, nil
	}
	return &ir.Chatter{Kind: ir.ChatterClose, Value: toks[1].Text}, nil
}
