package catalog

import (
	"strconv"
	"strings"

	"countwall/pglex"
)

// valuesList renders a VALUES list closed in FROM. PostgreSQL names its
// columns with the alias's column list, (VALUES ...) s(name, tp, tpm), as
// psql's \gdesc writes it; SQLite has no column list on an alias and
// names a VALUES list's columns column1, column2, ..., so the list becomes
// a subquery that renames them. Without a column list it stays as it is.
func (t *translator) valuesList(inner string) string {
	out := "(" + inner + ")"
	k := 1
	if t.nextIs(k, pglex.Word, "as") {
		k++
	}
	alias, ok := t.peek(k)
	if !ok || (alias.Kind != pglex.Word && alias.Kind != pglex.QuotedIdent) || sqlKeywords[alias.Text] || clauseWords[alias.Text] {
		return out
	}
	if !t.nextIs(k+1, pglex.Op, "(") {
		return out
	}
	var columns []string
	j := k + 2
	for ; ; j += 2 {
		name, ok := t.peek(j)
		if !ok || (name.Kind != pglex.Word && name.Kind != pglex.QuotedIdent) {
			return out
		}
		columns = append(columns, "column"+strconv.Itoa(len(columns)+1)+" AS "+pglex.QuoteIdentAlways(name.Text))
		if t.nextIs(j+1, pglex.Op, ")") {
			break
		}
		if !t.nextIs(j+1, pglex.Op, ",") {
			return out
		}
	}
	t.i += j + 1 // through the column list's ")"
	return "(SELECT " + strings.Join(columns, ", ") + " FROM " + out + ") AS " + pglex.QuoteIdentAlways(alias.Text)
}
