package proxy

import "testing"

func TestEndsTransaction(t *testing.T) {
	e := newFixture(t, 10).open(t, "exact", nil)
	s := e.NewSession("alice")
	tests := []struct {
		sql  string
		want bool
	}{
		{"COMMIT", true},
		{"rollback;", true},
		{"END", true},
		{"ABORT", true},
		{"COMMIT WORK", true},
		{"ROLLBACK TRANSACTION", true},
		{"-- done\nCOMMIT", true},
		{"BEGIN", false},
		{"SELECT COUNT(*) FROM people", false},
		{"SELECT COUNT(*) FROM people WHERE age > $1", false},
		{"SHOW budget", false},
		{"SET epsilon = 0.2", false},
		{"COMMITT", false},
		{"", false},
		{"DELETE FROM people", false},
	}
	for _, tc := range tests {
		if got := s.EndsTransaction(tc.sql); got != tc.want {
			t.Errorf("EndsTransaction(%q) = %v, want %v", tc.sql, got, tc.want)
		}
	}
}
