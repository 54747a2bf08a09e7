package pglex

import "strings"

// reserved are PostgreSQL's keywords that cannot name a column unquoted:
// the "reserved" and "reserved (can be function or type)" rows of Appendix C
// of its manual. `WHERE default = 'no'` is a syntax error there and here;
// `WHERE "default" = 'no'` names the column.
var reserved = setOf(
	// reserved
	"all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "both",
	"case", "cast", "check", "collate", "column", "constraint", "create", "current_catalog",
	"current_date", "current_role", "current_time", "current_timestamp", "current_user",
	"default", "deferrable", "desc", "distinct", "do", "else", "end", "except", "false",
	"fetch", "for", "foreign", "from", "grant", "group", "having", "in", "initially",
	"intersect", "into", "lateral", "leading", "limit", "localtime", "localtimestamp", "not",
	"null", "offset", "on", "only", "or", "order", "placing", "primary", "references",
	"returning", "select", "session_user", "some", "symmetric", "system_user", "table", "then",
	"to", "trailing", "true", "union", "unique", "user", "using", "variadic", "when", "where",
	"window", "with",
	// reserved (can be function or type)
	"authorization", "binary", "collation", "concurrently", "cross", "current_schema",
	"freeze", "full", "ilike", "inner", "is", "isnull", "join", "left", "like", "natural",
	"notnull", "outer", "overlaps", "right", "similar", "tablesample", "verbose",
)

// foldedWords are the words statements commonly write in capitals (the
// reserved keywords and a few more the COUNT language uses), each to its
// one folded string.
var foldedWords = func() map[string]string {
	m := map[string]string{}
	for w := range reserved {
		m[w] = w
	}
	for _, w := range []string{"count", "between", "by", "escape", "exists", "set", "show", "begin", "commit", "rollback"} {
		m[w] = w
	}
	return m
}()

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// IsReserved reports whether name, as written unquoted, is one of
// PostgreSQL's reserved keywords and so cannot name a column without quotes.
func IsReserved(name string) bool { return reserved[strings.ToLower(name)] }
