package catalog

import (
	"fmt"
	"strconv"
	"strings"

	"countwall/pgerror"
	"countwall/pglex"
)

// translate renders a PostgreSQL catalog query as SQLite SQL over the
// catalog database. It works on tokens, so strings and identifiers are read
// by PostgreSQL's rules; PostgreSQL constructs SQLite lacks are rewritten
// (casts, regular-expression operators, = ANY over arrays, ARRAY(SELECT),
// subscripts, catalog functions) and anything it does not know is refused
// with 0A000 rather than guessed at.
func translate(toks []pglex.Token, s Session, m *Model) (string, error) {
	t := &translator{toks: toks, session: s, model: m, stack: []*frame{{}}}
	for t.i = 0; t.i < len(toks); t.i++ {
		if err := t.token(toks[t.i]); err != nil {
			return "", err
		}
	}
	t.endTableFunc()
	if len(t.stack) != 1 {
		return "", unsupported("unbalanced parentheses")
	}
	return strings.Join(t.stack[0].pieces, " "), nil
}

func unsupported(what string) error {
	return pgerror.Errorf(pgerror.FeatureNotSupported, "catalog query not supported: %s", what).
		WithHint("countwall answers the catalog queries of psql, JDBC, SQLAlchemy and pgx from the configured tables; see docs/analyst.md, schema discovery")
}

type frameKind int

const (
	groupFrame     frameKind = iota // ( ... )
	callFrame                       // f( ... )
	anyFrame                        // = ANY ( array )
	allFrame                        // <> ALL ( array )
	arrayFrame                      // ARRAY ( SELECT ... )
	arrayLitFrame                   // ARRAY [ ... ]
	subscriptFrame                  // x [ i ]
)

// frame is an open parenthesis or bracket: its contents so far, as pieces
// of SQLite text. A closed frame becomes one piece of its parent, so the
// operand of a cast or a subscript is always the last piece.
type frame struct {
	kind    frameKind
	name    string // callFrame: the function
	operand string // subscriptFrame: what is subscripted
	pieces  []string
	joinDot bool // the last piece ends in "." and the next word joins it
}

type translator struct {
	toks    []pglex.Token
	i       int
	session Session
	model   *Model
	stack   []*frame
	// tableFunc is a set-returning function just closed in FROM, waiting
	// for its alias.
	tableFunc *tableFunc
}

func (t *translator) top() *frame { return t.stack[len(t.stack)-1] }

func (t *translator) peek(k int) (pglex.Token, bool) {
	if t.i+k < len(t.toks) {
		return t.toks[t.i+k], true
	}
	return pglex.Token{}, false
}

func (t *translator) nextIs(k int, kind pglex.Kind, text string) bool {
	tok, ok := t.peek(k)
	return ok && tok.Kind == kind && tok.Text == text
}

// emit adds a piece, joining it to a qualifier before a dot.
func (t *translator) emit(p string) {
	f := t.top()
	if f.joinDot && len(f.pieces) > 0 {
		f.pieces[len(f.pieces)-1] += p
		f.joinDot = false
		return
	}
	f.pieces = append(f.pieces, p)
}

// popPiece removes and returns the last piece: the operand of a postfix
// construct.
func (t *translator) popPiece() (string, bool) {
	f := t.top()
	if len(f.pieces) == 0 {
		return "", false
	}
	p := f.pieces[len(f.pieces)-1]
	f.pieces = f.pieces[:len(f.pieces)-1]
	return p, true
}

func (t *translator) token(tok pglex.Token) error {
	if t.tableFunc != nil && t.tableFuncAlias(tok) {
		return nil
	}
	switch tok.Kind {
	case pglex.Word:
		return t.word(tok)
	case pglex.QuotedIdent:
		if err := checkName(tok.Text); err != nil {
			return err
		}
		t.emit(pglex.QuoteIdentAlways(tok.Text))
	case pglex.String:
		t.emit(quoteString(tok.Text))
	case pglex.Number:
		t.emit(tok.Text)
	case pglex.Param:
		t.emit("?" + strconv.Itoa(tok.N))
	default:
		return t.op(tok)
	}
	return nil
}

// sqlKeywords are the words that may stand before "(" without being a
// function call.
var sqlKeywords = map[string]bool{
	"select": true, "from": true, "where": true, "and": true, "or": true, "not": true, "in": true,
	"exists": true, "as": true, "on": true, "using": true, "join": true, "when": true, "then": true,
	"else": true, "case": true, "values": true, "over": true, "filter": true, "union": true, "all": true,
	"distinct": true, "cast": true, "with": true, "is": true, "like": true, "between": true, "by": true,
	"partition": true, "end": true, "except": true, "intersect": true, "lateral": true, "recursive": true,
}

func (t *translator) word(tok pglex.Token) error {
	w := tok.Text
	if err := checkName(w); err != nil {
		return err
	}
	f := t.top()
	if f.joinDot {
		t.emit(w)
		return nil
	}
	if n := len(f.pieces); n > 0 && f.pieces[n-1] == "as" && !t.nextIs(1, pglex.Op, "(") {
		t.emit(pglex.QuoteIdentAlways(w)) // an alias, which may be a word SQLite reserves (default)
		return nil
	}
	switch {
	case (w == "pg_catalog" || w == "information_schema") && t.nextIs(1, pglex.Op, "."):
		// pg_catalog.f( is the function f; a qualified relation keeps its
		// schema, which the catalog database attaches under that name.
		if name, ok := t.peek(2); ok && t.nextIs(3, pglex.Op, "(") && name.Kind == pglex.Word {
			t.i++
			return nil
		}
		t.emit(w)
	case w == "operator" && t.nextIs(1, pglex.Op, "("):
		return t.operatorSyntax()
	case w == "collate":
		t.skipCollation()
	case w == "true":
		t.emit("1")
	case w == "false":
		t.emit("0")
	case w == "ilike":
		t.emit("LIKE")
	case (w == "any" || w == "some" || w == "all") && t.nextIs(1, pglex.Op, "("):
		return t.quantified(w)
	case w == "array" && t.nextIs(1, pglex.Op, "("):
		t.i++
		t.stack = append(t.stack, &frame{kind: arrayFrame})
	case w == "array" && t.nextIs(1, pglex.Op, "["):
		t.i++
		t.stack = append(t.stack, &frame{kind: arrayLitFrame})
	case t.nextIs(1, pglex.Op, "(") && !sqlKeywords[w]:
		if _, ok := functions[w]; !ok && setReturning[w] == nil {
			return unsupported(fmt.Sprintf("function %s", w))
		}
		t.i++
		t.stack = append(t.stack, &frame{kind: callFrame, name: w})
	default:
		if v, ok := t.bareFunction(w); ok {
			t.emit(v)
			return nil
		}
		t.emit(w)
	}
	return nil
}

// bareFunction answers the SQL functions written without parentheses.
func (t *translator) bareFunction(w string) (string, bool) {
	switch w {
	case "current_user", "session_user", "user", "current_role":
		return quoteString(t.session.Analyst), true
	case "current_catalog":
		return quoteString(DatabaseName), true
	case "current_schema":
		return quoteString("public"), true
	}
	return "", false
}

// operatorSyntax reads OPERATOR(schema.op) as the operator op.
func (t *translator) operatorSyntax() error {
	t.i += 2 // OPERATOR (
	var op pglex.Token
	for ; t.i < len(t.toks); t.i++ {
		tok := t.toks[t.i]
		if tok.Kind == pglex.Op && tok.Text == ")" {
			if op.Text == "" {
				return unsupported("OPERATOR()")
			}
			return t.op(op)
		}
		if tok.Kind == pglex.Op && tok.Text != "." {
			op = tok
		}
	}
	return unsupported("unterminated OPERATOR()")
}

// skipCollation drops COLLATE name: the catalog compares bytes, as the C
// collation does.
func (t *translator) skipCollation() {
	t.i++ // the name
	for t.nextIs(1, pglex.Op, ".") {
		t.i += 2
	}
}

// quantified reads op ANY (array) and op ALL (array); arrays are JSON text
// in the catalog database.
func (t *translator) quantified(w string) error {
	op, ok := t.popPiece()
	kind := anyFrame
	switch {
	case ok && op == "=" && w != "all":
	case ok && op == "<>" && w == "all":
		kind = allFrame
	default:
		return unsupported(fmt.Sprintf("%s %s (...)", op, strings.ToUpper(w)))
	}
	t.i++
	t.stack = append(t.stack, &frame{kind: kind})
	return nil
}

func (t *translator) op(tok pglex.Token) error {
	switch tok.Text {
	case ".":
		f := t.top()
		if len(f.pieces) == 0 {
			return unsupported("a leading dot")
		}
		f.pieces[len(f.pieces)-1] += "."
		f.joinDot = true
	case "(":
		t.stack = append(t.stack, &frame{kind: groupFrame})
	case ")":
		return t.closeFrame(")")
	case "[":
		operand, ok := t.popPiece()
		if !ok {
			return unsupported("a subscript without an array")
		}
		t.stack = append(t.stack, &frame{kind: subscriptFrame, operand: operand})
	case "]":
		return t.closeFrame("]")
	case "::":
		return t.cast()
	case "~", "!~", "~*", "!~*":
		t.regexpOp(tok.Text)
	case "~~":
		t.emit("LIKE")
	case "!~~":
		t.emit("NOT LIKE")
	case ";":
		if t.i != len(t.toks)-1 {
			return unsupported("several statements")
		}
	case "=", "<>", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "||", ",", "&", "|":
		t.emit(tok.Text)
	default:
		return unsupported(fmt.Sprintf("operator %s", tok.Text))
	}
	return nil
}

// regexpOp renders PostgreSQL's POSIX match operators with SQLite's REGEXP,
// which calls the regexp function the catalog registers.
func (t *translator) regexpOp(op string) {
	not := strings.HasPrefix(op, "!")
	kw := "REGEXP"
	if not {
		kw = "NOT REGEXP"
	}
	if strings.HasSuffix(op, "*") {
		kw += " '(?i)' ||"
	}
	t.emit(kw)
}

func (t *translator) closeFrame(closer string) error {
	if len(t.stack) < 2 {
		return unsupported("unbalanced " + closer)
	}
	f := t.top()
	if (closer == "]") != (f.kind == subscriptFrame || f.kind == arrayLitFrame) {
		return unsupported("mismatched " + closer)
	}
	t.stack = t.stack[:len(t.stack)-1]
	inner := strings.Join(f.pieces, " ")
	var out string
	switch f.kind {
	case groupFrame:
		out = "(" + inner + ")"
		if len(f.pieces) > 0 && f.pieces[0] == "values" {
			out = t.valuesList(inner)
		}
	case callFrame:
		if set, ok := setReturning[f.name]; ok {
			return t.startTableFunc(f.name, set, splitArgs(f.pieces))
		}
		args := splitArgs(f.pieces)
		if f.name == "substring" {
			args = substringArgs(f.pieces)
		}
		s, err := functions[f.name](t, args)
		if err != nil {
			return err
		}
		out = s
	case anyFrame, allFrame:
		out = "IN (SELECT value FROM json_each(cw_array(" + inner + ")))"
		if len(f.pieces) > 0 && f.pieces[0] == "select" {
			out = "IN (" + inner + ")"
		}
		if f.kind == allFrame {
			out = "NOT " + out
		}
	case arrayFrame:
		s, err := arraySubquery(f.pieces)
		if err != nil {
			return err
		}
		out = s
	case arrayLitFrame:
		out = "json_array(" + inner + ")"
	case subscriptFrame:
		out = "cw_subscript(" + f.operand + ", " + inner + ")"
	}
	t.emit(out)
	return nil
}

// splitArgs splits a call's pieces at its top-level commas (nested
// parentheses are single pieces already).
func splitArgs(pieces []string) []string {
	if len(pieces) == 0 {
		return nil
	}
	var args []string
	var cur []string
	for _, p := range pieces {
		if p == "," {
			args = append(args, strings.Join(cur, " "))
			cur = nil
			continue
		}
		cur = append(cur, p)
	}
	return append(args, strings.Join(cur, " "))
}

// arraySubquery renders ARRAY(SELECT x ...) as the JSON array of x.
func arraySubquery(pieces []string) (string, error) {
	if len(pieces) < 2 || !strings.EqualFold(pieces[0], "select") {
		return "", unsupported("ARRAY(...) of something other than a SELECT")
	}
	end := len(pieces)
	for i := 1; i < len(pieces); i++ {
		if pieces[i] == "," {
			return "", unsupported("ARRAY(SELECT ...) of more than one column")
		}
		if pieces[i] == "from" {
			end = i
			break
		}
	}
	item := pieces[1:end]
	if n := len(item); n >= 2 && item[n-2] == "as" {
		item = item[:n-2]
	}
	rest := strings.Join(pieces[end:], " ")
	return "(SELECT json_group_array(cw_v) FROM (SELECT " + strings.Join(item, " ") + " AS cw_v " + rest + "))", nil
}

// cast reads ::type after an operand and renders it.
func (t *translator) cast() error {
	operand, ok := t.popPiece()
	if !ok {
		return unsupported("a cast without an operand")
	}
	name := t.typeName()
	s, err := castTo(operand, name)
	if err != nil {
		return err
	}
	t.emit(s)
	return nil
}

// typeName reads a type name after ::, lower-cased and without schema,
// modifiers or array brackets (which are noted by a [] suffix).
func (t *translator) typeName() string {
	var words []string
	for {
		tok, ok := t.peek(1)
		if !ok {
			break
		}
		switch {
		case tok.Kind == pglex.Word || tok.Kind == pglex.QuotedIdent:
			if tok.Kind == pglex.Word && len(words) > 0 && !typeWordFollows(words, tok.Text) {
				return strings.Join(words, " ")
			}
			words = append(words, strings.ToLower(tok.Text))
			t.i++
			continue
		case tok.Text == "." && len(words) == 1:
			words = nil // the schema
			t.i++
			continue
		case tok.Text == "(" && len(words) > 0:
			for t.i < len(t.toks) && t.toks[t.i].Text != ")" {
				t.i++
			}
			continue
		case tok.Text == "[" && t.nextIs(2, pglex.Op, "]"):
			t.i += 2
			return strings.Join(words, " ") + "[]"
		}
		break
	}
	return strings.Join(words, " ")
}

// typeWordFollows says whether w continues a multi-word type name.
func typeWordFollows(words []string, w string) bool {
	switch words[len(words)-1] {
	case "double":
		return w == "precision"
	case "character", "bit":
		return w == "varying"
	case "timestamp":
		return w == "with" || w == "without"
	case "with", "without":
		return w == "time"
	case "time":
		return w == "zone" || w == "with" || w == "without"
	}
	return false
}

// castTo renders operand::typ. Types of names (regclass, regtype,
// regnamespace) are oids looked up by name, shown by name when cast to text.
func castTo(operand, typ string) (string, error) {
	if strings.HasSuffix(typ, "[]") {
		return "cw_array(" + operand + ")", nil // arrays are JSON text
	}
	switch typ {
	case "text", "varchar", "character varying", "name", "char", "bpchar", "character", "\"char\"":
		for typ := range regTypes {
			if strings.HasPrefix(operand, "/*"+typ+"*/") {
				return regName(typ, operand), nil
			}
		}
		return "cw_text(" + operand + ")", nil
	case "int", "int2", "int4", "int8", "integer", "smallint", "bigint", "oid", "xid", "regproc", "regprocedure":
		if typ == "regproc" || typ == "regprocedure" {
			return "cw_unqualify(" + operand + ")", nil
		}
		return "CAST(" + operand + " AS INTEGER)", nil
	case "float4", "float8", "real", "double precision", "numeric", "decimal":
		return "CAST(" + operand + " AS REAL)", nil
	case "bool", "boolean":
		return "cw_bool(" + operand + ")", nil
	case "regclass", "regtype", "regnamespace":
		return regLookup(typ, operand), nil
	case "json", "jsonb", "unknown":
		return operand, nil
	}
	return "", unsupported("cast to " + typ)
}

// regTypes are the oid types that name catalog objects.
var regTypes = map[string]bool{"regclass": true, "regtype": true, "regnamespace": true}

// regLookup makes a name an oid (an integer is one already). The rendering
// starts with a comment naming the type, so that a cast of it to text can
// name the object.
func regLookup(typ, operand string) string {
	return fmt.Sprintf("/*%[1]s*/(CASE WHEN typeof(%[2]s) = 'integer' THEN %[2]s ELSE "+
		"(SELECT cw_oid FROM main.cw_names WHERE cw_kind = '%[1]s' AND cw_name = cw_unqualify(%[2]s) LIMIT 1) END)", typ, operand)
}

// regName is the name an oid of a reg type is shown as.
func regName(typ, operand string) string {
	return fmt.Sprintf("(SELECT cw_name FROM main.cw_names WHERE cw_kind = '%s' AND cw_display = 1 AND cw_oid = %s)", typ, operand)
}

// checkName refuses the names of SQLite's own schema and the catalog's
// helpers: they are not PostgreSQL's, and a client never needs them.
func checkName(name string) error {
	n := strings.ToLower(name)
	if strings.HasPrefix(n, "sqlite_") || strings.HasPrefix(n, "pragma_") || strings.HasPrefix(n, "cw_") || n == "main" || n == "temp" {
		return unsupported(fmt.Sprintf("relation %s", name))
	}
	return nil
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
