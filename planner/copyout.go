package planner

import (
	"strings"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/pglex"
)

// readCopyOut reads `COPY (query) TO STDOUT [[WITH] options]`, which psql's
// \copy (query) TO 'file' sends: the query is answered as any other
// (through the mechanism, charged and audited as itself) and written in
// COPY's format. isCopy is false for any other statement; a COPY whose
// form countwall does not take is refused with err.
func readCopyOut(sql string) (query string, out ir.CopyOut, isCopy bool, err error) {
	toks, ok := startingWith(sql, "copy")
	if !ok {
		return "", ir.CopyOut{}, false, nil
	}
	query, out, err = copyOut(sql, toks)
	return query, out, true, err
}

// copyOut reads the tokens of a COPY statement (its first is COPY): the
// query's text, cut from sql, and the options.
func copyOut(sql string, toks []pglex.Token) (string, ir.CopyOut, error) {
	toks = withoutSemicolon(toks)
	if copiesIn(toks) {
		return "", ir.CopyOut{}, pgerror.Errorf(pgerror.ReadOnlySQLTransaction, "COPY ... FROM is not allowed: countwall answers COUNT queries only and never writes")
	}
	refuse := pgerror.Errorf(pgerror.FeatureNotSupported, "COPY is supported only as COPY (SELECT ...) TO STDOUT [WITH (FORMAT csv, HEADER)]: countwall answers queries and never writes")
	if len(toks) < 2 || !isOp(toks[1], "(") {
		return "", ir.CopyOut{}, refuse
	}
	closing := matchingParen(toks, 1)
	if closing <= 2 { // unclosed, or an empty ()
		return "", ir.CopyOut{}, refuse
	}
	rest := toks[closing+1:]
	if len(rest) < 2 || !isWord(rest[0], "to") || !isWord(rest[1], "stdout") {
		return "", ir.CopyOut{}, refuse
	}
	out, err := copyOptions(rest[2:])
	if err != nil {
		return "", ir.CopyOut{}, err
	}
	if sql == "" {
		return "", out, nil // the planner checks the form only
	}
	first, last := toks[2], toks[closing-1]
	return sql[first.Pos : last.Pos+len(last.Raw)], out, nil
}

// copyOptions reads COPY's options: the parenthesised list (FORMAT text |
// csv, HEADER [true | false]) or the older words (CSV, HEADER), after an
// optional WITH.
func copyOptions(toks []pglex.Token) (ir.CopyOut, error) {
	var out ir.CopyOut
	if len(toks) > 0 && isWord(toks[0], "with") {
		toks = toks[1:]
	}
	bad := func(t pglex.Token) error {
		return pgerror.Errorf(pgerror.FeatureNotSupported, "COPY option %s is not supported; FORMAT text or csv and HEADER are", pglex.Near(t))
	}
	if len(toks) > 0 && isOp(toks[0], "(") {
		if !isOp(toks[len(toks)-1], ")") {
			return out, bad(toks[len(toks)-1])
		}
		for _, opt := range splitOnCommas(toks[1 : len(toks)-1]) {
			if len(opt) == 0 {
				return out, pgerror.Errorf(pgerror.SyntaxError, "COPY options: an empty option")
			}
			switch {
			case isWord(opt[0], "format") && len(opt) == 2 && (isWord(opt[1], "csv") || isWord(opt[1], "text")):
				out.CSV = isWord(opt[1], "csv")
			case isWord(opt[0], "header") && len(opt) == 1:
				out.Header = true
			case isWord(opt[0], "header") && len(opt) == 2 && (isWord(opt[1], "true") || isWord(opt[1], "on") || isWord(opt[1], "false") || isWord(opt[1], "off")):
				out.Header = isWord(opt[1], "true") || isWord(opt[1], "on")
			default:
				return out, bad(opt[0])
			}
		}
		return out, nil
	}
	for _, t := range toks {
		switch {
		case isWord(t, "csv"):
			out.CSV = true
		case isWord(t, "header"):
			out.Header = true
		default:
			return out, bad(t)
		}
	}
	return out, nil
}

// startingWith lexes sql when its first word is word (case aside), the
// statements the Engine reads before the planner (COPY, DECLARE, PREPARE);
// false, without lexing, for any other.
func startingWith(sql, word string) ([]pglex.Token, bool) {
	trimmed := strings.TrimLeft(sql, " \t\r\n")
	if len(trimmed) < len(word) || !strings.EqualFold(trimmed[:len(word)], word) {
		return nil, false
	}
	toks, err := pglex.Lex(sql)
	if err != nil || len(toks) == 0 || !isWord(toks[0], word) {
		return nil, false
	}
	return toks, true
}

// withoutSemicolon drops a statement's final semicolon.
func withoutSemicolon(toks []pglex.Token) []pglex.Token {
	if n := len(toks); n > 0 && isOp(toks[n-1], ";") {
		return toks[:n-1]
	}
	return toks
}

func isOp(t pglex.Token, text string) bool   { return t.Kind == pglex.Op && t.Text == text }
func isWord(t pglex.Token, text string) bool { return t.Kind == pglex.Word && t.Text == text }

// matchingParen is the index of the parenthesis closing the one at open,
// or -1.
func matchingParen(toks []pglex.Token, open int) int {
	depth := 0
	for i := open; i < len(toks); i++ {
		switch {
		case isOp(toks[i], "("):
			depth++
		case isOp(toks[i], ")"):
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// splitOnCommas cuts an option list at its commas.
func splitOnCommas(toks []pglex.Token) [][]pglex.Token {
	var out [][]pglex.Token
	start := 0
	for i := 0; i <= len(toks); i++ {
		if i == len(toks) || isOp(toks[i], ",") {
			out = append(out, toks[start:i])
			start = i + 1
		}
	}
	return out
}

// copiesIn reports whether a COPY writes into a table: its first FROM or
// TO outside parentheses is FROM.
func copiesIn(toks []pglex.Token) bool {
	depth := 0
	for _, t := range toks[1:] {
		switch {
		case isOp(t, "("):
			depth++
		case isOp(t, ")"):
			depth--
		case depth == 0 && isWord(t, "to"):
			return false
		case depth == 0 && isWord(t, "from"):
			return true
		}
	}
	return false
}
