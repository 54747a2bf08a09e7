package attacks

import (
	"fmt"
	"strings"
)

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
