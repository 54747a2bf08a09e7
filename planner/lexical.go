package planner

import (
	"countwall/ir"
	"countwall/pgerror"
	"countwall/pglex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The statement is read by PostgreSQL's lexical rules (package pglex) and
// only then handed to xwb1989/sqlparser, whose reader follows MySQL's. The
// text the parser gets is rendered from the tokens so that MySQL's rules read
// it exactly as PostgreSQL's read the original: strings re-escaped for a
// reader where backslash escapes, identifiers in backquotes, no comments.

// isGrammarWord reports whether w stays unquoted for the MySQL-grammar
// parser because the COUNT language (or a construct countwall names when it
// refuses it) uses it as a keyword. Every other word is an identifier, as
// PostgreSQL would read it, and goes to the parser in backquotes, so that a
// MySQL-only keyword such as div, regexp or interval is a column name, as it
// is in PostgreSQL. It and allowedOp are switches: they are asked of every
// token of every statement, where a map's hashing costs more.
func isGrammarWord(w string) bool {
	switch w {
	case "between", "by", "exists", "escape":
		return true
	}
	return false
}

// allowedOp reports whether op is one of the operators and punctuation the
// COUNT language uses.
func allowedOp(op string) bool {
	switch op {
	case "(", ")", ",", ";", ".", "*", "=", "<>", "<", "<=", ">", ">=", "+", "-", "/", "%":
		return true
	}
	return false
}

// mysqlText is the parser's text with where each token starts in it.
type mysqlText struct {
	text   string
	toks   []pglex.Token
	starts []int
}

// render writes toks for the MySQL-grammar parser. $n becomes the parser's
// :vn value argument. Operators the COUNT language does not use are refused
// here, before MySQL could give them its own meaning (|| is OR there).
func render(toks []pglex.Token) (mysqlText, error) {
	return renderSlots(toks, nil)
}

// renderSlots is render, except that when slot is not nil each literal it
// accepts (it returns true) is written as the value argument :lN, N
// counting the accepted literals from 1.
func renderSlots(toks []pglex.Token, slot func(i int, t pglex.Token) bool) (mysqlText, error) {
	var b strings.Builder
	size := 0
	for _, t := range toks {
		size += len(t.Text) + 6 // a space, backquotes or quotes, a slot's number
	}
	b.Grow(size)
	out := mysqlText{toks: toks}
	if slot == nil {
		// Where each token starts places a syntax error; a shape's text
		// (slot set) is never shown: a shape the parser refuses is read
		// from the statement's own text.
		out.starts = make([]int, len(toks))
	}
	slots := 0
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		if out.starts != nil {
			out.starts[i] = b.Len()
		}
		if slot != nil && (t.Kind == pglex.String || t.Kind == pglex.Number) && slot(i, t) {
			slots++
			b.WriteString(literalSlotPrefix)
			b.WriteString(strconv.Itoa(slots))
			continue
		}
		switch t.Kind {
		case pglex.Word:
			nextIsParen := i+1 < len(toks) && toks[i+1].Kind == pglex.Op && toks[i+1].Text == "("
			if pglex.IsReserved(t.Text) || isGrammarWord(t.Text) || nextIsParen {
				b.WriteString(t.Text)
			} else {
				writeBackquoted(&b, t.Text)
			}
		case pglex.QuotedIdent:
			writeBackquoted(&b, t.Text)
		case pglex.String:
			b.WriteByte('\'')
			for j := 0; j < len(t.Text); j++ {
				switch c := t.Text[j]; c {
				case '\\', '\'':
					b.WriteByte('\\')
					b.WriteByte(c)
				case 0:
					return mysqlText{}, pgerror.Errorf(pgerror.SyntaxError, "a string constant may not contain a zero byte")
				default:
					b.WriteByte(c)
				}
			}
			b.WriteByte('\'')
		case pglex.Number:
			b.WriteString(t.Text)
		case pglex.Param:
			fmt.Fprintf(&b, ":v%d", t.N)
		case pglex.Op:
			switch {
			case t.Text == "::":
				return mysqlText{}, pgerror.Errorf(pgerror.FeatureNotSupported, "type casts (::) are not supported")
			case t.Text == "<=>" && t.Raw == notDistinctRaw:
			case !allowedOp(t.Text):
				return mysqlText{}, pgerror.Errorf(pgerror.FeatureNotSupported, "operator %s is not supported", pglex.Shorten(t.Raw))
			}
			b.WriteString(t.Text)
		}
	}
	out.text = b.String()
	return out, nil
}

func writeBackquoted(b *strings.Builder, name string) {
	b.WriteByte('`')
	b.WriteString(strings.ReplaceAll(name, "`", "``"))
	b.WriteByte('`')
}

var lockingWords = map[string]bool{"update": true, "share": true, "no": true, "key": true}

var positionRE = regexp.MustCompile(`at position ([0-9]+)`)

// syntaxError turns the MySQL-grammar parser's complaint into PostgreSQL's
// wording, naming the token of the analyst's own text where parsing stopped.
func (m mysqlText) syntaxError(perr error) error {
	for i, t := range m.toks {
		if t.Kind != pglex.Word {
			continue
		}
		switch {
		case t.Text == "over" && i+1 < len(m.toks) && m.toks[i+1].Text == "(":
			return pgerror.Errorf(pgerror.FeatureNotSupported, "window functions are not supported")
		case t.Text == "for" && i+1 < len(m.toks) && lockingWords[m.toks[i+1].Text]:
			// PostgreSQL's FOR UPDATE, FOR SHARE, FOR NO KEY UPDATE and FOR KEY SHARE.
			return pgerror.Errorf(pgerror.FeatureNotSupported, "locking clauses are not supported")
		case t.Text == "ilike" || t.Text == "similar":
			return pgerror.Errorf(pgerror.FeatureNotSupported, "%s is not supported; LIKE is, where the policy allows it", strings.ToUpper(t.Text))
		}
	}
	hint := "countwall accepts SELECT [group columns,] COUNT(*) FROM table [WHERE ...] [GROUP BY ...] [ORDER BY ...]"
	pos := -1
	if sm := positionRE.FindStringSubmatch(perr.Error()); sm != nil {
		pos, _ = strconv.Atoi(sm[1])
	}
	// The parser reports the offset just past the token it could not take.
	stop := -1
	for i, s := range m.starts {
		if s < pos {
			stop = i
		}
	}
	// Past the end with no token named, the parser ran out of input, unless
	// the last word is a reserved one it could not take (AND default).
	if atEnd := pos > len(m.text) && !strings.Contains(perr.Error(), " near '"); atEnd && stop >= 0 {
		if last := m.toks[len(m.toks)-1]; last.Kind == pglex.Word && pglex.IsReserved(last.Text) && !languageWord(last) {
			stop = len(m.toks) - 1
		} else {
			stop = -1
		}
	}
	if stop < 0 {
		return pgerror.Errorf(pgerror.SyntaxError, "syntax error at end of input").WithHint(hint)
	}
	// A reserved word the COUNT language has no use for, just before where
	// the parser stopped, is what stopped it: WHERE default = 'no'.
	if stop > 0 && !languageWord(m.toks[stop]) && !languageWord(m.toks[stop-1]) && pglex.IsReserved(m.toks[stop-1].Text) {
		stop--
	}
	t := m.toks[stop]
	if t.Kind == pglex.Word && pglex.IsReserved(t.Text) && !languageWord(t) {
		hint = fmt.Sprintf("%s is a reserved word; to name a column %s, write it in double quotes: %s", strings.ToUpper(t.Text), t.Text, pglex.QuoteIdent(t.Text))
	}
	return pgerror.Errorf(pgerror.SyntaxError, "syntax error at or near %s", pglex.Near(t)).WithHint(hint)
}

// splitStatements cuts the tokens at semicolons and refuses more than one
// statement; it returns the statement's tokens without the semicolon.
func splitStatements(toks []pglex.Token) ([]pglex.Token, error) {
	var first []pglex.Token
	seen := false
	start := 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) && !(toks[i].Kind == pglex.Op && toks[i].Text == ";") {
			continue
		}
		if piece := toks[start:i]; len(piece) > 0 {
			if seen {
				return nil, pgerror.Errorf(pgerror.SyntaxError, "several statements in one string are not allowed; send one statement at a time")
			}
			first, seen = piece, true
		}
		start = i + 1
	}
	return first, nil
}

// names a setting may be spelled with: a word or a quoted identifier, with
// dots between parts.
func settingName(toks []pglex.Token) (string, int) {
	var parts []string
	i := 0
	for i < len(toks) {
		t := toks[i]
		if t.Kind != pglex.Word && t.Kind != pglex.QuotedIdent {
			break
		}
		parts = append(parts, t.Text)
		i++
		if i+1 < len(toks) && toks[i].Kind == pglex.Op && toks[i].Text == "." {
			i++
			continue
		}
		break
	}
	return strings.Join(parts, "."), i
}

// parseSet reads SET [SESSION | LOCAL] name {= | TO} value [, value ...] and
// SET TIME ZONE value. A quoted value loses its quotes; a list is kept as
// "a, b".
func parseSet(toks []pglex.Token) (ir.Statement, error) {
	toks = toks[1:]
	local := false
	if len(toks) > 0 && toks[0].Kind == pglex.Word && (toks[0].Text == "session" || toks[0].Text == "local") {
		local = toks[0].Text == "local"
		toks = toks[1:]
	}
	name, n := settingName(toks)
	if name == "" {
		return nil, pgerror.Errorf(pgerror.SyntaxError, "SET needs a name and a value: SET name = value")
	}
	name = strings.ToLower(name)
	toks = toks[n:]
	if name == "time" && len(toks) > 0 && toks[0].Kind == pglex.Word && toks[0].Text == "zone" {
		name, toks = "timezone", toks[1:]
	} else if len(toks) > 0 && ((toks[0].Kind == pglex.Op && toks[0].Text == "=") || (toks[0].Kind == pglex.Word && toks[0].Text == "to")) {
		toks = toks[1:]
	}
	if len(toks) == 0 {
		return nil, pgerror.Errorf(pgerror.SyntaxError, "SET %s needs a value", name)
	}
	var items []string
	var item strings.Builder
	sign := false // the last token was a sign, which sticks to the number after it
	for _, t := range toks {
		if item.Len() > 0 && !sign && !(t.Kind == pglex.Op && t.Text == ",") {
			item.WriteByte(' ')
		}
		sign = t.Kind == pglex.Op && (t.Text == "-" || t.Text == "+")
		switch {
		case t.Kind == pglex.Op && t.Text == ",":
			items = append(items, item.String())
			item.Reset()
		case t.Kind == pglex.Word || t.Kind == pglex.Number || t.Kind == pglex.Op || t.Kind == pglex.Param:
			item.WriteString(t.Raw) // words as typed: SHOW gives back what SET was given
		default:
			item.WriteString(t.Text)
		}
	}
	items = append(items, item.String())
	value := strings.Join(items, ", ")
	if name == "epsilon" || name == "delta" {
		if !decimalRE.MatchString(value) {
			return nil, pgerror.Errorf(pgerror.InvalidParameterValue, "SET %s needs a number in decimal or exponent form, such as 0.1 or 1e-6", name)
		}
	}
	return &ir.Set{Name: name, Value: value, Local: local}, nil
}

// decimalRE is a number in plain decimal or exponent form: no hexadecimal,
// no digit separators, no NaN or Infinity (which Go's ParseFloat would take).
var decimalRE = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

func parseShow(toks []pglex.Token) (ir.Statement, error) {
	name, n := settingName(toks[1:])
	if name == "" || n != len(toks)-1 {
		return nil, pgerror.Errorf(pgerror.SyntaxError, "SHOW needs one setting name: SHOW budget")
	}
	return &ir.Show{Name: strings.ToLower(name)}, nil
}

// parseReset reads RESET name and RESET ALL.
func parseReset(toks []pglex.Token) (ir.Statement, error) {
	name, n := settingName(toks[1:])
	if name == "" || n != len(toks)-1 {
		return nil, pgerror.Errorf(pgerror.SyntaxError, "RESET needs one setting name or ALL: RESET epsilon")
	}
	return &ir.Set{Name: strings.ToLower(name), Reset: true}, nil
}

// parseDeallocate reads DEALLOCATE [PREPARE] {name | ALL}; a quoted name
// keeps its case, an unquoted one is folded as PostgreSQL folds it.
func parseDeallocate(toks []pglex.Token) (ir.Statement, error) {
	toks = toks[1:]
	if len(toks) > 1 && toks[0].Kind == pglex.Word && toks[0].Text == "prepare" {
		toks = toks[1:]
	}
	if len(toks) != 1 || (toks[0].Kind != pglex.Word && toks[0].Kind != pglex.QuotedIdent) {
		return nil, pgerror.Errorf(pgerror.SyntaxError, "DEALLOCATE needs one prepared statement's name or ALL: DEALLOCATE name")
	}
	if toks[0].Kind == pglex.Word && toks[0].Text == "all" {
		return &ir.Chatter{Kind: ir.ChatterDeallocate}, nil
	}
	return &ir.Chatter{Kind: ir.ChatterDeallocate, Value: toks[0].Text}, nil
}

// parseDiscard reads DISCARD {ALL | PLANS | SEQUENCES | TEMP | TEMPORARY};
// Value is what it discards, TEMPORARY read as TEMP.
func parseDiscard(toks []pglex.Token) (ir.Statement, error) {
	if len(toks) == 2 && toks[1].Kind == pglex.Word {
		switch w := toks[1].Text; w {
		case "all", "plans", "sequences", "temp":
			return &ir.Chatter{Kind: ir.ChatterDiscard, Value: w}, nil
		case "temporary":
			return &ir.Chatter{Kind: ir.ChatterDiscard, Value: "temp"}, nil
		}
	}
	return nil, pgerror.Errorf(pgerror.SyntaxError, "DISCARD takes ALL, PLANS, SEQUENCES or TEMP: DISCARD ALL")
}

// parseSavepoint reads SAVEPOINT name, RELEASE [SAVEPOINT] name and
// ROLLBACK [WORK | TRANSACTION] TO [SAVEPOINT] name (kind says which); for
// a ROLLBACK without TO, ok is false: it is the block's ROLLBACK.
func parseSavepoint(toks []pglex.Token, kind ir.ChatterKind) (st ir.Statement, ok bool, err error) {
	rest := toks[1:]
	word := func(w string) bool {
		if len(rest) > 0 && rest[0].Kind == pglex.Word && rest[0].Text == w {
			rest = rest[1:]
			return true
		}
		return false
	}
	if kind == ir.ChatterRollbackTo {
		if !word("work") {
			word("transaction")
		}
		if !word("to") {
			return nil, false, nil
		}
	}
	if kind != ir.ChatterSavepoint {
		word("savepoint")
	}
	if len(rest) != 1 || (rest[0].Kind != pglex.Word && rest[0].Kind != pglex.QuotedIdent) {
		return nil, true, pgerror.Errorf(pgerror.SyntaxError, "%s needs one savepoint name", strings.ToUpper(toks[0].Text))
	}
	return &ir.Chatter{Kind: kind, Value: rest[0].Text}, true, nil
}

// namesCatalog reports whether a token names PostgreSQL's catalog, which
// psql's \d and drivers' introspection read.
func namesCatalog(toks []pglex.Token) bool {
	for _, t := range toks {
		if t.NamesCatalog() {
			return true
		}
	}
	return false
}

// languageWords are the keywords of the COUNT language.
var languageWords = map[string]bool{
	"select": true, "from": true, "where": true, "and": true, "or": true, "not": true,
	"as": true, "in": true, "is": true, "null": true, "like": true, "between": true,
	"group": true, "order": true, "by": true, "asc": true, "desc": true, "distinct": true,
	"true": true, "false": true, "count": true,
}

func languageWord(t pglex.Token) bool { return t.Kind == pglex.Word && languageWords[t.Text] }
