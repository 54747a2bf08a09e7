package pglex

import "testing"

// TestQuoteIdent: each name as QuoteIdent and QuoteIdentAlways write it,
// and what either writes lexes back as one identifier naming exactly it,
// never as the keyword or the words it spells.
func TestQuoteIdent(t *testing.T) {
	tests := []struct{ name, bare, always string }{
		{"sex", "sex", `"sex"`},
		{"_x1", "_x1", `"_x1"`},
		{"x$1", "x$1", `"x$1"`},
		{"âge", "âge", `"âge"`},
		{"status", "status", `"status"`}, // a MySQL keyword, not a PostgreSQL reserved one
		{"default", `"default"`, `"default"`},
		{"order", `"order"`, `"order"`},
		{"Sex", `"Sex"`, `"Sex"`},
		{"SELECT", `"SELECT"`, `"SELECT"`},
		{"1x", `"1x"`, `"1x"`},
		{"$x", `"$x"`, `"$x"`},
		{"two words", `"two words"`, `"two words"`},
		{"a and b", `"a and b"`, `"a and b"`},
		{" and ", `" and "`, `" and "`},
		{"my where t", `"my where t"`, `"my where t"`},
		{`a"b`, `"a""b"`, `"a""b"`},
		{`"`, `""""`, `""""`},
		{`"x"`, `"""x"""`, `"""x"""`},
		{`a" and "b`, `"a"" and ""b"`, `"a"" and ""b"`},
		{"a;b", `"a;b"`, `"a;b"`},
		{"a--b", `"a--b"`, `"a--b"`},
		{"", `""`, `""`},
	}
	for _, tc := range tests {
		if got := QuoteIdent(tc.name); got != tc.bare {
			t.Errorf("QuoteIdent(%q) = %s, want %s", tc.name, got, tc.bare)
		}
		if got := QuoteIdentAlways(tc.name); got != tc.always {
			t.Errorf("QuoteIdentAlways(%q) = %s, want %s", tc.name, got, tc.always)
		}
		if tc.name == "" {
			continue // a zero-length name is no identifier; PostgreSQL refuses "" too
		}
		for _, written := range []string{tc.bare, tc.always} {
			toks, err := Lex(written)
			if err != nil || len(toks) != 1 || toks[0].Text != tc.name || (toks[0].Kind != Word && toks[0].Kind != QuotedIdent) ||
				(toks[0].Kind == Word && IsReserved(toks[0].Text)) {
				t.Errorf("Lex(%s) = %+v, %v; want the one identifier %q", written, toks, err, tc.name)
			}
		}
	}
}
