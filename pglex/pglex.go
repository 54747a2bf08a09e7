// Package pglex reads a statement by PostgreSQL's lexical rules, with
// standard_conforming_strings on, so that the text an analyst's driver sends
// means what it would mean to PostgreSQL, whatever grammar parses it next.
//
// The front door speaks the PostgreSQL protocol, and drivers that interpolate
// parameters (psycopg2, pgx in simple-protocol mode) escape values for
// PostgreSQL: a backslash is an ordinary character in '...', a quote is
// doubled. Read with another dialect's rules the same bytes can change the
// query (a value ending in a backslash would swallow the closing quote), so
// everything after this package sees tokens, never the raw text.
//
// Constructs whose meaning would need more than plain strings and
// identifiers are refused with 0A000 naming them rather than read some other
// way: E'...' escape strings, $$...$$ and $tag$...$tag$ dollar quoting,
// U&'...' and U&"..." Unicode escapes, B'...' and X'...' bit strings and
// N'...' national strings.
package pglex

import (
	"countwall/pgerror"
	"fmt"
	"strconv"
	"strings"
)

// Kind is what a token is.
type Kind int

const (
	Word        Kind = iota // unquoted keyword or identifier, folded to lower case
	QuotedIdent             // "..." identifier: case kept, "" read as "
	String                  // '...' constant: Text is its value
	Number                  // numeric constant as typed
	Param                   // $n placeholder: N is n
	Op                      // operator or punctuation: ( ) , ; . = <> < <= > >= + - * / % :: and others
)

func (k Kind) String() string {
	switch k {
	case Word:
		return "word"
	case QuotedIdent:
		return "quoted identifier"
	case String:
		return "string constant"
	case Number:
		return "number"
	case Param:
		return "parameter"
	default:
		return "operator"
	}
}

// Token is one lexical unit of the statement.
type Token struct {
	Kind Kind
	Text string // Word: lower-cased; QuotedIdent and String: the value; others: as typed (!= as <>)
	Raw  string // the bytes of the statement the token was read from
	Pos  int    // byte offset of Raw in the statement
	N    int    // Param: the parameter number
}

// NamesCatalog reports whether the token is a name of PostgreSQL's catalog
// (pg_catalog, information_schema, a pg_ relation or function), which
// psql's \d and drivers' introspection read.
func (t Token) NamesCatalog() bool {
	if t.Kind != Word && t.Kind != QuotedIdent {
		return false
	}
	name := strings.ToLower(t.Text)
	return name == "pg_catalog" || name == "information_schema" || strings.HasPrefix(name, "pg_")
}

// MaxParam is the highest $n accepted, as in the extended protocol's limit
// on parameters countwall binds.
const MaxParam = 1000

// Lex splits sql into tokens, dropping whitespace and comments. Its errors
// are *pgerror.Error values that name the construct and never echo more of
// the statement than the token they stopped at.
func Lex(sql string) ([]Token, error) {
	// About one token for every three bytes of SQL (IN lists of small
	// numbers are that dense), so that the slice is rarely grown.
	return LexAppend(make([]Token, 0, len(sql)/3+8), sql)
}

// LexAppend is Lex appending the tokens to dst, so that a caller reading
// statement after statement (an attack stream) can reuse one slice.
func LexAppend(dst []Token, sql string) ([]Token, error) {
	l := &lexer{src: sql, toks: dst}
	for {
		tok, ok, err := l.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return l.toks, nil
		}
		l.toks = append(l.toks, tok)
	}
}

type lexer struct {
	src  string
	pos  int
	toks []Token
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdentCont(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// opChars are the characters PostgreSQL builds operators from.
const opChars = "~!@#^&|`?+-*/%<>="

func isOpChar(c byte) bool { return strings.IndexByte(opChars, c) >= 0 }

// skipSpace skips whitespace and comments; -- runs to the end of the line (a
// \n or a \r, as PostgreSQL's scanner reads non_newline) and
// /* */ nests, as in PostgreSQL (so /*! ... */ is a comment like any other).
func (l *lexer) skipSpace() error {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case isSpace(c):
			l.pos++
		case strings.HasPrefix(l.src[l.pos:], "--"):
			nl := strings.IndexAny(l.src[l.pos:], "\n\r")
			if nl < 0 {
				l.pos = len(l.src)
			} else {
				l.pos += nl + 1
			}
		case strings.HasPrefix(l.src[l.pos:], "/*"):
			start := l.pos
			depth := 0
			for {
				switch {
				case l.pos >= len(l.src):
					return syntaxAt(l.src[start:min(start+2, len(l.src))], "unterminated /* comment")
				case strings.HasPrefix(l.src[l.pos:], "/*"):
					depth++
					l.pos += 2
				case strings.HasPrefix(l.src[l.pos:], "*/"):
					depth--
					l.pos += 2
				default:
					l.pos++
				}
				if depth == 0 {
					break
				}
			}
		default:
			return nil
		}
	}
	return nil
}

func (l *lexer) next() (Token, bool, error) {
	if err := l.skipSpace(); err != nil {
		return Token{}, false, err
	}
	if l.pos >= len(l.src) {
		return Token{}, false, nil
	}
	start := l.pos
	c := l.src[start]
	rest := l.src[start:]
	switch {
	case c == '\'':
		return l.str(start)
	case c == '"':
		return l.quotedIdent(start)
	case (c == 'e' || c == 'E') && len(rest) > 1 && rest[1] == '\'':
		return Token{}, false, unsupported("E'...' escape strings", "write the value as a plain '...' string; a backslash in it is an ordinary character")
	case (c == 'b' || c == 'B' || c == 'x' || c == 'X') && len(rest) > 1 && rest[1] == '\'':
		return Token{}, false, unsupported("bit-string constants (B'...', X'...')", "")
	case (c == 'n' || c == 'N') && len(rest) > 1 && rest[1] == '\'':
		return Token{}, false, unsupported("N'...' national character strings", "write the value as a plain '...' string")
	case (c == 'u' || c == 'U') && len(rest) > 2 && rest[1] == '&' && (rest[2] == '\'' || rest[2] == '"'):
		return Token{}, false, unsupported("U&'...' and U&\"...\" Unicode escapes", "write the characters themselves in a plain '...' string or \"...\" identifier")
	case isIdentStart(c):
		l.pos++
		for l.pos < len(l.src) && isIdentCont(l.src[l.pos]) {
			l.pos++
		}
		raw := l.src[start:l.pos]
		return Token{Kind: Word, Text: foldASCII(raw), Raw: raw, Pos: start}, true, nil
	case isDigit(c) || (c == '.' && len(rest) > 1 && isDigit(rest[1])):
		return l.number(start)
	case c == '$':
		return l.dollar(start)
	case c == '`':
		return Token{}, false, pgerror.Errorf(pgerror.SyntaxError, "syntax error at or near \"`\"").
			WithHint("backquotes are MySQL's; PostgreSQL quotes identifiers with double quotes: \"default\"")
	case c == ':':
		if strings.HasPrefix(rest, "::") {
			l.pos += 2
			return l.op(start), true, nil
		}
		return Token{}, false, syntaxAt(":", "syntax error")
	case strings.IndexByte("(),;.[]", c) >= 0:
		l.pos++
		return l.op(start), true, nil
	case isOpChar(c):
		return l.operator(start)
	}
	return Token{}, false, syntaxAt(l.src[start:start+utf8Len(c, rest)], "syntax error")
}

func utf8Len(c byte, rest string) int {
	n := 1
	if c >= 0x80 {
		for n < len(rest) && n < 4 && rest[n]&0xC0 == 0x80 {
			n++
		}
	}
	return n
}

func (l *lexer) op(start int) Token {
	raw := l.src[start:l.pos]
	return Token{Kind: Op, Text: raw, Raw: raw, Pos: start}
}

// foldASCII lower-cases ASCII letters only, as PostgreSQL does for
// unquoted identifiers in a multibyte encoding.
func foldASCII(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r >= 'A' && r <= 'Z' })
	if i < 0 {
		return s // already folded: most words are, and this is every word of every statement
	}
	var buf [32]byte
	b := buf[:0]
	if len(s) > len(buf) {
		b = make([]byte, 0, len(s))
	}
	b = append(b, s...)
	for ; i < len(b); i++ {
		if c := b[i]; c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	// Keywords written in capitals (SELECT COUNT(*) FROM ... WHERE ... AND)
	// are folded to one shared string each rather than a new one per
	// statement.
	if w, ok := foldedWords[string(b)]; ok {
		return w
	}
	return string(b)
}

// str reads a '...' constant: ” is a quote, a backslash is itself. Two
// constants separated only by whitespace that holds a newline are one, as
// the SQL standard and PostgreSQL say.
func (l *lexer) str(start int) (Token, bool, error) {
	l.pos = start
	body, err := l.quoted('\'', "unterminated quoted string")
	if err != nil {
		return Token{}, false, err
	}
	if !l.continuation() {
		return Token{Kind: String, Text: body, Raw: l.src[start:l.pos], Pos: start}, true, nil
	}
	var b strings.Builder
	b.WriteString(body)
	for {
		body, err := l.quoted('\'', "unterminated quoted string")
		if err != nil {
			return Token{}, false, err
		}
		b.WriteString(body)
		if !l.continuation() {
			break
		}
	}
	return Token{Kind: String, Text: b.String(), Raw: l.src[start:l.pos], Pos: start}, true, nil
}

// quoted reads from the opening delimiter at l.pos to the closing one; a
// doubled delimiter stands for itself.
func (l *lexer) quoted(delim byte, unterminated string) (string, error) {
	open := l.pos
	l.pos++
	// Most constants hold no doubled delimiter: their body is the text
	// between the delimiters, shared with the statement rather than copied.
	if i := strings.IndexByte(l.src[l.pos:], delim); i >= 0 && (l.pos+i+1 >= len(l.src) || l.src[l.pos+i+1] != delim) {
		body := l.src[l.pos : l.pos+i]
		l.pos += i + 1
		return body, nil
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(l.src[l.pos:], delim)
		if i < 0 {
			l.pos = len(l.src)
			return "", syntaxAt(l.src[open:min(open+1, len(l.src))], unterminated)
		}
		b.WriteString(l.src[l.pos : l.pos+i])
		l.pos += i + 1
		if l.pos < len(l.src) && l.src[l.pos] == delim {
			b.WriteByte(delim)
			l.pos++
			continue
		}
		return b.String(), nil
	}
}

// continuation reports whether another '...' follows after whitespace that
// contains a newline (and -- comments after it), and moves to its quote.
func (l *lexer) continuation() bool {
	i := l.pos
	for i < len(l.src) && (l.src[i] == ' ' || l.src[i] == '\t' || l.src[i] == '\f') {
		i++
	}
	newline := false
	for i < len(l.src) {
		c := l.src[i]
		switch {
		case c == '\n' || c == '\r':
			newline = true
			i++
		case isSpace(c):
			i++
		case newline && strings.HasPrefix(l.src[i:], "--"):
			nl := strings.IndexAny(l.src[i:], "\n\r")
			if nl < 0 {
				return false
			}
			i += nl
		case c == '\'' && newline:
			l.pos = i
			return true
		default:
			return false
		}
	}
	return false
}

func (l *lexer) quotedIdent(start int) (Token, bool, error) {
	l.pos = start
	name, err := l.quoted('"', "unterminated quoted identifier")
	if err != nil {
		return Token{}, false, err
	}
	if name == "" {
		return Token{}, false, syntaxAt(`""`, "zero-length delimited identifier")
	}
	if strings.IndexByte(name, 0) >= 0 {
		return Token{}, false, syntaxAt(`"`, "identifier contains a zero byte")
	}
	return Token{Kind: QuotedIdent, Text: name, Raw: l.src[start:l.pos], Pos: start}, true, nil
}

// number reads digits [. digits] [e [+-] digits]; a letter right after a
// number is "trailing junk", as PostgreSQL says, so 0x1F is refused rather
// than read as hexadecimal.
func (l *lexer) number(start int) (Token, bool, error) {
	digits := func() {
		for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
			l.pos++
		}
	}
	digits()
	// A dot starts a fraction unless it is the first of "..".
	if l.pos < len(l.src) && l.src[l.pos] == '.' && !strings.HasPrefix(l.src[l.pos:], "..") {
		l.pos++
		digits()
	}
	if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
		j := l.pos + 1
		if j < len(l.src) && (l.src[j] == '+' || l.src[j] == '-') {
			j++
		}
		if j < len(l.src) && isDigit(l.src[j]) {
			l.pos = j
			digits()
		}
	}
	if l.pos < len(l.src) && isIdentStart(l.src[l.pos]) {
		// Quoted up to the first junk character, as PostgreSQL does.
		return Token{}, false, syntaxAt(l.src[start:l.pos+1], "trailing junk after numeric literal")
	}
	raw := l.src[start:l.pos]
	return Token{Kind: Number, Text: raw, Raw: raw, Pos: start}, true, nil
}

// dollar reads $n, and refuses $$ and $tag$ dollar quoting.
func (l *lexer) dollar(start int) (Token, bool, error) {
	j := start + 1
	for j < len(l.src) && isDigit(l.src[j]) {
		j++
	}
	if j > start+1 {
		if j < len(l.src) && isIdentCont(l.src[j]) {
			return Token{}, false, syntaxAt(l.src[start:j+1], "trailing junk after parameter")
		}
		n, err := strconv.Atoi(l.src[start+1 : j])
		if err != nil || n < 1 || n > MaxParam {
			return Token{}, false, pgerror.Errorf(pgerror.SyntaxError, "parameter number must be between $1 and $%d", MaxParam)
		}
		l.pos = j
		raw := l.src[start:j]
		return Token{Kind: Param, Text: raw, Raw: raw, Pos: start, N: n}, true, nil
	}
	// $tag$ where the tag is an identifier without $.
	k := start + 1
	if k < len(l.src) && isIdentStart(l.src[k]) {
		for k < len(l.src) && isIdentCont(l.src[k]) && l.src[k] != '$' {
			k++
		}
	}
	if k < len(l.src) && l.src[k] == '$' {
		return Token{}, false, unsupported("dollar-quoted strings ($$...$$, $tag$...$tag$)", "write the value as a plain '...' string with each quote doubled")
	}
	return Token{}, false, syntaxAt("$", "syntax error")
}

// operator reads a run of operator characters with PostgreSQL's rules: a
// comment start ends it, and a trailing + or - belongs to the next token
// unless the operator holds one of ~ ! @ # % ^ & | ` ? (so a=-1 is = and -1).
// # is an operator character in PostgreSQL, not a comment: it is refused
// with a word saying so rather than read as MySQL would.
func (l *lexer) operator(start int) (Token, bool, error) {
	end := start
	for end < len(l.src) && isOpChar(l.src[end]) {
		if end > start && (strings.HasPrefix(l.src[end:], "--") || strings.HasPrefix(l.src[end:], "/*")) {
			break
		}
		end++
	}
	raw := l.src[start:end]
	if len(raw) > 1 && !strings.ContainsAny(raw, "~!@#%^&|`?") {
		for len(raw) > 1 && (raw[len(raw)-1] == '+' || raw[len(raw)-1] == '-') {
			raw = raw[:len(raw)-1]
		}
	}
	switch {
	case strings.Contains(raw, "#"):
		return Token{}, false, syntaxAt(raw, "syntax error").
			WithHint("# does not start a comment in PostgreSQL; use -- or /* */")
	case strings.Contains(raw, "`"):
		return Token{}, false, syntaxAt(raw, "syntax error").
			WithHint("backquotes are MySQL's; PostgreSQL quotes identifiers with double quotes: \"default\"")
	}
	l.pos = start + len(raw)
	text := raw
	if text == "!=" {
		text = "<>"
	}
	return Token{Kind: Op, Text: text, Raw: raw, Pos: start}, true, nil
}

// syntaxAt is PostgreSQL's wording: `<what> at or near "<token>"`.
func syntaxAt(near, what string) *pgerror.Error {
	return pgerror.Errorf(pgerror.SyntaxError, "%s at or near %s", what, Quote(Shorten(near)))
}

func unsupported(construct, hint string) *pgerror.Error {
	e := pgerror.Errorf(pgerror.FeatureNotSupported, "%s are not supported", construct)
	if hint != "" {
		e = e.WithHint(hint)
	}
	return e
}

// Shorten keeps an error's quotation of the analyst's text short.
func Shorten(s string) string {
	const limit = 40
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}

// Quote writes s as PostgreSQL writes a token in an error: in double quotes.
func Quote(s string) string { return fmt.Sprintf("\"%s\"", s) }

// Near names a token in a syntax error: its text, in double quotes, but a
// string constant or a number only by its kind, since values the analyst
// typed must not reach the audit log through an error message.
func Near(t Token) string {
	switch t.Kind {
	case String:
		return "a string constant"
	case Number:
		return "a number"
	}
	return Quote(Shorten(t.Raw))
}
