package catalog

import (
	"strings"

	"countwall/pglex"
)

// alwaysEmpty are the relations the catalog never fills: a protected table
// has no keys, indexes, defaults, triggers, policies, statistics,
// publications, inheritance or sequences.
var alwaysEmpty = map[string]bool{
	"pg_attrdef": true, "pg_index": true, "pg_constraint": true, "pg_inherits": true, "pg_policy": true,
	"pg_statistic_ext": true, "pg_publication": true, "pg_publication_rel": true, "pg_publication_namespace": true,
	"pg_trigger": true, "pg_rewrite": true, "pg_sequence": true, "pg_enum": true, "pg_range": true, "pg_stats": true,
	"pg_statistic": true, "pg_extension": true, "pg_foreign_table": true, "pg_partitioned_table": true,
	"pg_depend": true, "pg_views": true, "pg_matviews": true, "pg_indexes": true, "pg_proc": true,
	"views": true, "table_constraints": true, "key_column_usage": true, "referential_constraints": true,
	"routines": true, "sequences": true,
}

// aggregates make a SELECT without GROUP BY return a row over no rows.
var aggregates = map[string]bool{
	"count": true, "max": true, "min": true, "sum": true, "avg": true, "string_agg": true, "array_agg": true,
	"bool_or": true, "bool_and": true, "json_agg": true, "every": true,
}

// provablyEmpty answers a statement the translation cannot render (set
// returning functions over index keys, composite field access) when its
// result is empty whatever those constructs mean: every branch of it
// inner-joins a relation that is always empty. The columns are named from
// the select list and sent as text.
func provablyEmpty(sql string) (*Result, bool) {
	toks, err := lex(sql)
	if err != nil || len(toks) == 0 {
		return nil, false
	}
	if toks[len(toks)-1].Text == ";" {
		toks = toks[:len(toks)-1]
	}
	if !emptySelect(toks) {
		return nil, false
	}
	names, ok := selectNames(toks)
	if !ok {
		return nil, false
	}
	res := &Result{Columns: make([]OutputColumn, len(names))}
	for i, n := range names {
		res.Columns[i] = OutputColumn{Name: n, Type: WireText}
	}
	return res, true
}

// clause is a run of tokens at one nesting depth: the positions at depth 0
// of the run split the statement.
func depthZero(toks []pglex.Token, visit func(i int, t pglex.Token) bool) {
	depth := 0
	for i, t := range toks {
		if t.Kind == pglex.Op && (t.Text == "(" || t.Text == "[") {
			depth++
			continue
		}
		if t.Kind == pglex.Op && (t.Text == ")" || t.Text == "]") {
			depth--
			continue
		}
		if depth == 0 && !visit(i, t) {
			return
		}
	}
}

// emptySelect reports whether every UNION branch of a SELECT is empty.
func emptySelect(toks []pglex.Token) bool {
	if len(toks) == 0 || toks[0].Kind != pglex.Word || toks[0].Text != "select" {
		return false
	}
	var cuts []int
	depthZero(toks, func(i int, t pglex.Token) bool {
		if t.Kind == pglex.Word && (t.Text == "union" || t.Text == "except" || t.Text == "intersect") {
			cuts = append(cuts, i)
		}
		return true
	})
	start := 0
	for _, cut := range append(cuts, len(toks)) {
		branch := toks[start:cut]
		if len(branch) > 0 && branch[0].Text == "all" {
			branch = branch[1:]
		}
		if !emptyBranch(branch) {
			return false
		}
		start = cut + 1
	}
	return true
}

// emptyBranch reports whether one SELECT ... FROM ... inner-joins an empty
// relation and has no aggregate without GROUP BY.
func emptyBranch(toks []pglex.Token) bool {
	from, end := -1, len(toks)
	grouped, aggregated := false, false
	depthZero(toks, func(i int, t pglex.Token) bool {
		if t.Kind != pglex.Word {
			return true
		}
		switch {
		case t.Text == "from" && from < 0:
			from = i
		case from >= 0 && end == len(toks) && (t.Text == "where" || t.Text == "group" || t.Text == "order" || t.Text == "limit" || t.Text == "having"):
			end = i
			grouped = grouped || t.Text == "group"
		case from < 0 && aggregates[t.Text] && i+1 < len(toks) && toks[i+1].Text == "(":
			aggregated = true
		case t.Text == "group":
			grouped = true
		}
		return true
	})
	if from < 0 || (aggregated && !grouped) {
		return false
	}
	return emptyFrom(toks[from+1 : end])
}

// emptyFrom reports whether a FROM list has an always-empty item that is
// not on the optional side of an outer join (and no RIGHT or FULL join).
func emptyFrom(toks []pglex.Token) bool {
	empty, outer, pendingLeft := false, false, false
	itemStart, optional := 0, false
	next := func(i int, nextOptional bool) {
		if !optional && emptyItem(toks[itemStart:i]) {
			empty = true
		}
		itemStart, optional = i+1, nextOptional
	}
	depthZero(toks, func(i int, t pglex.Token) bool {
		switch {
		case t.Kind == pglex.Op && t.Text == ",":
			next(i, false)
		case t.Kind != pglex.Word:
		case t.Text == "right" || t.Text == "full":
			outer = true
		case t.Text == "left":
			next(i, true)
			pendingLeft = true
		case t.Text == "join" && pendingLeft:
			itemStart, pendingLeft = i+1, false
		case t.Text == "join" || t.Text == "inner" || t.Text == "cross":
			next(i, false)
		}
		return true
	})
	next(len(toks), false)
	return empty && !outer
}

// emptyItem reports whether a FROM item (its relation and whatever follows
// it: alias, ON condition) starts with an always-empty relation or a
// subquery that is empty.
func emptyItem(item []pglex.Token) bool {
	for len(item) > 0 && item[0].Kind == pglex.Word && (item[0].Text == "join" || item[0].Text == "outer" || item[0].Text == "lateral") {
		item = item[1:]
	}
	if len(item) == 0 {
		return false
	}
	if item[0].Text == "(" {
		closeAt := matching(item)
		return closeAt > 0 && emptySelect(item[1:closeAt])
	}
	name := item[0].Text
	if len(item) >= 3 && item[1].Text == "." {
		name = item[2].Text
	}
	return alwaysEmpty[name]
}

// matching returns the index of the parenthesis closing toks[0].
func matching(toks []pglex.Token) int {
	depth := 0
	for i, t := range toks {
		switch {
		case t.Kind == pglex.Op && t.Text == "(":
			depth++
		case t.Kind == pglex.Op && t.Text == ")":
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// selectNames names the columns of a SELECT as PostgreSQL does: the alias,
// else the column or function name, else ?column?.
func selectNames(toks []pglex.Token) ([]string, bool) {
	var items [][]pglex.Token
	itemStart := 1
	ok := true
	depthZero(toks, func(i int, t pglex.Token) bool {
		if i == 0 {
			return true
		}
		switch {
		case t.Kind == pglex.Op && t.Text == ",":
			items = append(items, toks[itemStart:i])
			itemStart = i + 1
		case t.Kind == pglex.Word && t.Text == "from":
			items = append(items, toks[itemStart:i])
			return false
		}
		return true
	})
	names := make([]string, 0, len(items))
	for _, it := range items {
		n := itemName(it)
		if n == "" {
			ok = false
		}
		names = append(names, n)
	}
	return names, ok && len(names) > 0
}

func itemName(it []pglex.Token) string {
	n := len(it)
	switch {
	case n == 0:
		return ""
	case n >= 2 && it[n-2].Kind == pglex.Word && it[n-2].Text == "as":
		return it[n-1].Text
	case it[n-1].Text == "*":
		return ""
	case it[n-1].Kind == pglex.Word || it[n-1].Kind == pglex.QuotedIdent:
		if n == 1 || it[n-2].Text == "." {
			return it[n-1].Text
		}
		return it[n-1].Text // a bare alias
	case it[0].Kind == pglex.Word && n > 1 && it[1].Text == "(":
		return strings.ToLower(it[0].Text)
	}
	return "?column?"
}
