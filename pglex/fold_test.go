package pglex

import (
	"strings"
	"testing"
)

func TestContainsAnyFold(t *testing.T) {
	hints := []string{"pg_", "information_schema", "transaction"}
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"SELECT COUNT(*) FROM people WHERE age > 3", false},
		{"select * from PG_CLASS", true},
		{"SELECT 1 FROM Information_Schema.tables", true},
		{"SHOW TRANSACTION ISOLATION LEVEL", true},
		{"pg", false},
		{"xx pg_", true},
		{"", false},
		{"TRANSACTIO", false},
		{"pgpg_", true},
	} {
		if got := ContainsAnyFold(tc.s, hints); got != tc.want {
			t.Errorf("ContainsAnyFold(%q) = %v, want %v", tc.s, got, tc.want)
		}
		want := false
		for _, h := range hints {
			want = want || strings.Contains(strings.ToLower(tc.s), h)
		}
		if want != tc.want {
			t.Errorf("%q: the table says %v, strings.Contains %v", tc.s, tc.want, want)
		}
	}
	if !ContainsFold("EXPLAIN SELECT", "explain") || ContainsFold("SELECT COUNT(*) FROM t", "explain") {
		t.Error("ContainsFold on EXPLAIN")
	}
	if !ContainsAnyFold("anything", []string{""}) {
		t.Error("the empty word is in every text")
	}
}
