package catalog

import (
	"strings"

	"countwall/pgerror"
	"countwall/pglex"
)

// lex reads a catalog statement by PostgreSQL's lexical rules. Escape
// strings (E'\n', which psql's \l sends) are first rewritten as plain
// strings, since the analysts' lexer refuses them.
func lex(sql string) ([]pglex.Token, error) {
	plain, err := plainEscapeStrings(sql)
	if err != nil {
		return nil, err
	}
	return pglex.Lex(plain)
}

// plainEscapeStrings rewrites each E'...' constant as the '...' constant of
// the same value, leaving everything else (other strings, quoted
// identifiers, comments) as it is.
func plainEscapeStrings(sql string) (string, error) {
	if !strings.ContainsAny(sql, "eE") || !strings.Contains(sql, "'") {
		return sql, nil
	}
	var b strings.Builder
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'' || c == '"':
			end := skipQuoted(sql, i, c)
			b.WriteString(sql[i:end])
			i = end
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			end := strings.IndexAny(sql[i:], "\r\n")
			if end < 0 {
				end = len(sql) - i
			}
			b.WriteString(sql[i : i+end])
			i += end
		case (c == 'e' || c == 'E') && i+1 < len(sql) && sql[i+1] == '\'' && (i == 0 || !identByte(sql[i-1])):
			value, end, err := escapeString(sql, i+2)
			if err != nil {
				return "", err
			}
			b.WriteString("'" + strings.ReplaceAll(value, "'", "''") + "'")
			i = end
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

func identByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// skipQuoted returns the end of the quoted text starting at i (a doubled
// quote stands for itself), or the end of sql when it is unterminated.
func skipQuoted(sql string, i int, q byte) int {
	for j := i + 1; j < len(sql); j++ {
		if sql[j] == q {
			if j+1 < len(sql) && sql[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(sql)
}

// escapeString reads the body of E'...' from i: backslash escapes (\n \t
// \r \b \f \\ \' and \ before any other character) and doubled quotes.
func escapeString(sql string, i int) (value string, end int, err error) {
	var b strings.Builder
	for i < len(sql) {
		c := sql[i]
		switch {
		case c == '\\' && i+1 < len(sql):
			b.WriteByte(map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f'}[sql[i+1]] | plainEscape(sql[i+1]))
			i += 2
		case c == '\'' && i+1 < len(sql) && sql[i+1] == '\'':
			b.WriteByte('\'')
			i += 2
		case c == '\'':
			return b.String(), i + 1, nil
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", 0, pgerror.Errorf(pgerror.SyntaxError, "unterminated quoted string")
}

// plainEscape is the character a backslash escape stands for when it is not
// a control-character escape: the character itself.
func plainEscape(c byte) byte {
	if strings.IndexByte("ntrbf", c) >= 0 {
		return 0
	}
	return c
}
