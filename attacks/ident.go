package attacks

import (
	"fmt"
	"strings"
)

// pgReserved are PostgreSQL's reserved keywords (Appendix C of its manual:
// "reserved" and "reserved (can be function or type)"). A column named by
// one must be double-quoted in SQL. The firewall's lexer holds the same list;
// a test checks that the two agree.
var pgReserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric both
		case cast check collate column constraint create current_catalog current_date
		current_role current_time current_timestamp current_user default deferrable desc
		distinct do else end except false fetch for foreign from grant group having in
		initially intersect into lateral leading limit localtime localtimestamp not null offset
		on only or order placing primary references returning select session_user some
		symmetric system_user table then to trailing true union unique user using variadic
		when where window with
		authorization binary collation concurrently cross current_schema freeze full ilike
		inner is isnull join left like natural notnull outer overlaps right similar
		tablesample verbose`) {
		pgReserved[w] = true
	}
}

// QuoteIdent writes a column name for the SQL the attacks send, as
// PostgreSQL reads names: as is when it is a plain lower-case name, else in
// double quotes with each " doubled (a reserved word such as default, a name
// with upper case or other characters). SQLite, which the truth readers
// query, reads double-quoted names the same way.
func QuoteIdent(name string) string {
	plain := name != "" && !pgReserved[name]
	for i := 0; i < len(name) && plain; i++ {
		c := name[i]
		plain = c == '_' || (c >= 'a' && c <= 'z') || c >= 0x80 || (i > 0 && ((c >= '0' && c <= '9') || c == '$'))
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// ParseColumnName reads a column name given on the command line as SQL
// would: a plain name folds to lower case (Age is age), a double-quoted one
// ("default", "Age") is taken as written, "" standing for a quote.
func ParseColumnName(s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		inner := s[1 : len(s)-1]
		if inner == "" || strings.Contains(strings.ReplaceAll(inner, `""`, ""), `"`) {
			return "", fmt.Errorf("column name %s is not a well-formed quoted name", s)
		}
		return strings.ReplaceAll(inner, `""`, `"`), nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
		if !letter && (i == 0 || !((c >= '0' && c <= '9') || c == '$')) {
			return "", fmt.Errorf("column name %q: give a plain name (letters, digits, _) or one in double quotes", s)
		}
	}
	if s == "" {
		return "", fmt.Errorf("column name is empty: give a plain name or one in double quotes")
	}
	return strings.ToLower(s), nil
}
