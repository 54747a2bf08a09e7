package planner

import (
	"strings"

	"countwall/pglex"
)

// Batch cuts a simple-protocol Query string into its statements at the
// semicolons that end them (not those inside strings, quoted names or
// comments, which the lexer reads by PostgreSQL's rules), as PostgreSQL runs
// several statements sent in one Query message. Empty statements are left
// out. A string without a semicolon, or one the lexer refuses, is one
// statement: Prepare reads it (and reports its error) as before.
func Batch(sql string) []string {
	if strings.IndexByte(sql, ';') < 0 {
		return []string{sql}
	}
	toks, err := pglex.Lex(sql)
	if err != nil {
		return []string{sql}
	}
	var out []string
	start := -1 // the first token of the statement being read
	for i := 0; i <= len(toks); i++ {
		end := i == len(toks) || (toks[i].Kind == pglex.Op && toks[i].Text == ";")
		if !end {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			last := toks[i-1]
			out = append(out, sql[toks[start].Pos:last.Pos+len(last.Raw)])
			start = -1
		}
	}
	if len(out) <= 1 {
		return []string{sql}
	}
	return out
}
