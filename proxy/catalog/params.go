package catalog

import (
	"strings"
	"sync"

	"countwall/pglex"
)

var (
	declOnce sync.Once
	declMap  map[string]string
)

// declaredTypes maps each catalog column name to its declared type (the
// first relation declaring a name wins; names repeat with one type).
func declaredTypes() map[string]string {
	declOnce.Do(func() {
		declMap = map[string]string{}
		for _, r := range relations {
			for _, c := range strings.Split(r.columns, ",") {
				f := strings.Fields(c)
				if _, seen := declMap[f[0]]; !seen {
					declMap[f[0]] = f[1]
				}
			}
		}
	})
	return declMap
}

// paramTypes infers the type of each $n as PostgreSQL would from its
// context: a cast ($1::text), or the catalog column it is compared with
// (oid = $1 is an oid, sent as an integer); text otherwise.
func paramTypes(toks []pglex.Token) []WireType {
	n := 0
	for _, t := range toks {
		if t.Kind == pglex.Param && t.N > n {
			n = t.N
		}
	}
	types := make([]WireType, n)
	for i, t := range toks {
		if t.Kind != pglex.Param {
			continue
		}
		if typ, ok := paramContext(toks, i); ok {
			types[t.N-1] = typ
		}
	}
	return types
}

func paramContext(toks []pglex.Token, i int) (WireType, bool) {
	if i+2 < len(toks) && toks[i+1].Text == "::" {
		switch toks[i+2].Text {
		case "int", "int2", "int4", "int8", "integer", "bigint", "smallint", "oid":
			return WireInt8, true
		}
		return WireText, true
	}
	comparison := func(t pglex.Token) bool {
		return t.Kind == pglex.Op && (t.Text == "=" || t.Text == "<>" || t.Text == "<" || t.Text == ">" || t.Text == "<=" || t.Text == ">=")
	}
	column := func(t pglex.Token) (WireType, bool) {
		if t.Kind != pglex.Word && t.Kind != pglex.QuotedIdent {
			return 0, false
		}
		decl, ok := declaredTypes()[strings.ToLower(t.Text)]
		if !ok || wireType(decl) == WireBool {
			return 0, false
		}
		return wireType(decl), true
	}
	if i >= 2 && comparison(toks[i-1]) {
		if typ, ok := column(toks[i-2]); ok {
			return typ, true
		}
	}
	if i+2 < len(toks) && comparison(toks[i+1]) {
		return column(toks[i+2])
	}
	return 0, false
}

// showChatter answers SHOW TRANSACTION ISOLATION LEVEL, which SQLAlchemy
// sends on connect: countwall's reads are read committed, as PostgreSQL's
// default.
func showChatter(sql string) (*Result, bool) {
	toks, err := lex(sql)
	if err != nil || !isShowIsolation(toks) {
		return nil, false
	}
	return &Result{Columns: []OutputColumn{{Name: "transaction_isolation", Type: WireText}},
		Rows: [][]Value{{{Text: "read committed"}}}}, true
}

// isShowIsolation reports whether toks are SHOW TRANSACTION ISOLATION
// LEVEL.
func isShowIsolation(toks []pglex.Token) bool {
	if len(toks) > 0 && toks[len(toks)-1].Text == ";" {
		toks = toks[:len(toks)-1]
	}
	words := []string{"show", "transaction", "isolation", "level"}
	if len(toks) != len(words) {
		return false
	}
	for i, t := range toks {
		if t.Text != words[i] {
			return false
		}
	}
	return true
}
