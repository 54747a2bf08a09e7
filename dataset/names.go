package dataset

import (
	"fmt"
	"strings"
	"unicode"

	"countwall/pglex"
)

// CheckName is the one rule for the name of a table or a column, whether
// `load` reads it from a CSV header or `init` from a database: any name
// that the config and the analysts' SQL can both carry. It may hold
// spaces, punctuation and reserved words (the analyst then writes it in
// double quotes, as QuotedNames lists them), but not:
//   - nothing, or blanks at either end, which no one sees when typing it;
//   - a control character;
//   - a dot, since the config's keys are dotted paths
//     (tables.orders.domains.region) and a dotted name would split there.
//
// Names are folded to lower case, as SQL folds an unquoted name and as the
// config's keys are read.
func CheckName(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("the %s name is empty", what)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("%s name %q begins or ends with a blank; remove it", what, name)
	case strings.Contains(name, "."):
		return fmt.Errorf("%s name %q holds a dot, which the config reads as a key separator; rename it (e.g. %q)",
			what, name, strings.ReplaceAll(name, ".", "_"))
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Errorf("%s name %q holds a control character", what, name)
	}
	return nil
}

// QuotedNames lists, as the analyst must type them, the table's names
// that SQL reads only in double quotes: reserved words (default, order)
// and names that are not plain identifiers ("visit date"). The config
// names them without the quotes.
func (t Table) QuotedNames() []string {
	var out []string
	for _, name := range append([]string{t.Name}, t.ColumnNames()...) {
		if pglex.NeedsQuoting(name) {
			out = append(out, pglex.QuoteIdent(name))
		}
	}
	return out
}

// QuotingNote says how to write the names QuotedNames lists, or "" when
// none needs quotes.
func (t Table) QuotingNote() string {
	quoted := t.QuotedNames()
	if len(quoted) == 0 {
		return ""
	}
	example := "SELECT COUNT(*) FROM " + pglex.QuoteIdent(t.Name)
	if col := firstQuotedColumn(t); col != "" {
		example += " WHERE " + col + " = ..."
	}
	return fmt.Sprintf("in SQL, write %s in double quotes, as here (%s)", strings.Join(quoted, ", "), example)
}

func firstQuotedColumn(t Table) string {
	for _, c := range t.Columns {
		if pglex.NeedsQuoting(c.Name) {
			return pglex.QuoteIdent(c.Name)
		}
	}
	return ""
}
