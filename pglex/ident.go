package pglex

import "strings"

// The one way countwall writes an identifier into SQL. QuoteIdent writes
// it as PostgreSQL would (quote_ident): bare when it can stand unquoted, so
// that the statements the attacks send and the texts the audit keeps read
// as a person writes them. QuoteIdentAlways quotes every name, for SQL sent
// to SQLite, whose reserved words are not PostgreSQL's (a bare index or
// abort is a syntax error there), and for generated SQL that must not hang
// on which words are reserved. Both double the quotes a name holds, which
// SQLite reads as PostgreSQL does.

// NeedsQuoting reports whether name must be double-quoted to be read as
// itself: it is a reserved word, holds upper case (which an unquoted name
// loses), or is not a plain identifier.
func NeedsQuoting(name string) bool {
	if name == "" || reserved[name] {
		return true
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		plain := c == '_' || (c >= 'a' && c <= 'z') || c >= 0x80 || (i > 0 && (isDigit(c) || c == '$'))
		if !plain {
			return true
		}
	}
	return false
}

// QuoteIdent writes name so that PostgreSQL's rules read it back unchanged:
// as is when it can stand unquoted, else in double quotes with each " doubled.
func QuoteIdent(name string) string {
	if !NeedsQuoting(name) {
		return name
	}
	return QuoteIdentAlways(name)
}

// QuoteIdentAlways writes name in double quotes with each " doubled,
// however plain it is.
func QuoteIdentAlways(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
