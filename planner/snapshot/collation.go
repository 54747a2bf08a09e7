package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// A column declared with a collating sequence other than BINARY (COLLATE
// NOCASE, RTRIM or one an application registers) compares, groups and tells
// its values apart by that sequence in SQLite, where the snapshot compares
// bytes. SQLite reports a column's collation nowhere but in the text of its
// CREATE TABLE, so that text is read: such a column's conditions, groups
// and units are left to SQLite.

// collatedColumns returns, by lower-case name, the columns of table whose
// declaration names a collating sequence other than BINARY. A schema object
// that is not a table (a view's columns take their base tables'
// collations) or a declaration it cannot read is an error: the snapshot
// then leaves the whole table to SQLite.
func collatedColumns(ctx context.Context, tx *sql.Tx, table string) (map[string]bool, error) {
	var kind string
	var create sql.NullString
	err := tx.QueryRowContext(ctx, "SELECT type, sql FROM sqlite_master WHERE name = ? COLLATE NOCASE AND type IN ('table', 'view')", table).Scan(&kind, &create)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("table %q is not in the protected database", table)
	}
	if err != nil {
		return nil, err
	}
	if kind != "table" {
		return nil, fmt.Errorf("%q is a %s; the in-memory copy holds tables only", table, kind)
	}
	return declaredCollations(create.String)
}

// declaredCollations reads a CREATE TABLE statement's column definitions
// and returns the columns (lower-case) that name a collating sequence other
// than BINARY.
func declaredCollations(create string) (map[string]bool, error) {
	tokens, err := sqliteTokens(create)
	if err != nil {
		return nil, err
	}
	// The column list is the first parenthesis; a table made by CREATE
	// TABLE ... AS SELECT has none before AS, and its columns no collation.
	start := -1
	for i, tok := range tokens {
		if tok.is("(") {
			start = i
			break
		}
		if tok.word && strings.EqualFold(tok.text, "AS") {
			return nil, nil
		}
	}
	if start < 0 {
		return nil, nil
	}
	collated := map[string]bool{}
	var def []sqliteToken // one definition's tokens at its own level
	depth := 0
	for _, tok := range tokens[start+1:] {
		switch {
		case tok.is("("):
			depth++
		case tok.is(")") && depth > 0:
			depth--
		case (tok.is(",") || tok.is(")")) && depth == 0:
			if name, ok := collatedDefinition(def); ok {
				collated[strings.ToLower(name)] = true
			}
			if tok.is(")") {
				return collated, nil
			}
			def = def[:0]
		case depth == 0:
			def = append(def, tok)
		}
	}
	return nil, fmt.Errorf("the table's CREATE statement has no end to its column list")
}

// collatedDefinition reports the column a definition declares when it
// names a collating sequence other than BINARY; table constraints
// (CONSTRAINT, PRIMARY KEY, UNIQUE, CHECK, FOREIGN KEY) declare none.
func collatedDefinition(def []sqliteToken) (string, bool) {
	if len(def) == 0 {
		return "", false
	}
	if def[0].word {
		switch strings.ToUpper(def[0].text) {
		case "CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN":
			return "", false
		}
	}
	for i := 1; i+1 < len(def); i++ {
		if def[i].word && strings.EqualFold(def[i].text, "COLLATE") && !strings.EqualFold(def[i+1].text, "BINARY") {
			return def[0].text, true
		}
	}
	return "", false
}

// sqliteToken is a word, a quoted name (unquoted in text), or one
// punctuation character.
type sqliteToken struct {
	text   string
	word   bool // an unquoted word
	quoted bool // a quoted name
}

// is reports whether the token is the punctuation p.
func (t sqliteToken) is(p string) bool { return !t.word && !t.quoted && t.text == p }

// sqliteTokens splits SQL text by SQLite's lexical rules, as far as a
// CREATE TABLE needs: comments and string literals are skipped, names
// quoted with "", [] or “ are unquoted, and every other character that is
// not part of a word is a token of its own.
func sqliteTokens(s string) ([]sqliteToken, error) {
	var out []sqliteToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case strings.HasPrefix(s[i:], "--"):
			end := strings.IndexByte(s[i:], '\n')
			if end < 0 {
				return out, nil
			}
			i += end + 1
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return out, nil // SQLite ends an unterminated comment at the end
			}
			i += end + 4
		case c == '\'' || c == '"' || c == '`' || c == '[':
			closing := c
			if c == '[' {
				closing = ']'
			}
			var b strings.Builder
			j := i + 1
			for {
				k := strings.IndexByte(s[j:], closing)
				if k < 0 {
					return nil, fmt.Errorf("the table's CREATE statement has an unterminated quote")
				}
				b.WriteString(s[j : j+k])
				j += k + 1
				if closing != ']' && j < len(s) && s[j] == closing { // a doubled quote
					b.WriteByte(closing)
					j++
					continue
				}
				break
			}
			if c != '\'' { // a string literal is no name
				out = append(out, sqliteToken{text: b.String(), quoted: true})
			}
			i = j
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			out = append(out, sqliteToken{text: s[i:j], word: true})
			i = j
		default:
			out = append(out, sqliteToken{text: s[i : i+1]})
			i++
		}
	}
	return out, nil
}

// isWordByte reports whether c can be part of an unquoted word: letters,
// digits, _ and $, and every byte of a non-ASCII character.
func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}
