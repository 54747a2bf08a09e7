package planner

import (
	"slices"
	"testing"
)

func TestBatch(t *testing.T) {
	cases := []struct {
		sql  string
		want []string
	}{
		{"SELECT COUNT(*) FROM people", []string{"SELECT COUNT(*) FROM people"}},
		{"SELECT COUNT(*) FROM people;", []string{"SELECT COUNT(*) FROM people;"}},
		{"SET epsilon = 0.1; SELECT COUNT(*) FROM people", []string{"SET epsilon = 0.1", "SELECT COUNT(*) FROM people"}},
		{"SET epsilon = 0.1;;  SHOW budget ; ", []string{"SET epsilon = 0.1", "SHOW budget"}},
		// Semicolons inside a string, a quoted name and a comment end nothing.
		{"SELECT COUNT(*) FROM people WHERE suburb = 'a;b'", []string{"SELECT COUNT(*) FROM people WHERE suburb = 'a;b'"}},
		{`SELECT COUNT(*) FROM "t;u" -- x; y` + "\n; SHOW budget", []string{`SELECT COUNT(*) FROM "t;u"`, "SHOW budget"}},
		{"SHOW budget /* ; */; SHOW epsilon", []string{"SHOW budget", "SHOW epsilon"}},
		// What the lexer refuses is left whole, for Prepare to report.
		{"SELECT 'open; SHOW budget", []string{"SELECT 'open; SHOW budget"}},
	}
	for _, tc := range cases {
		if got := Batch(tc.sql); !slices.Equal(got, tc.want) {
			t.Errorf("Batch(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}
