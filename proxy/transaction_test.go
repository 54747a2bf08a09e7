package proxy

import "testing"

// TestTransactionIsKnownAtPrepare: what a statement does to a transaction
// block is decided when it is prepared, for the wire to read.
func TestTransactionIsKnownAtPrepare(t *testing.T) {
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
		{"EXPLAIN COMMIT", false},
		{"SELECT 1", false},
	}
	for _, tc := range tests {
		if got := s.Prepare(tc.sql).Transaction.Ends(); got != tc.want {
			t.Errorf("Prepare(%q).Transaction.Ends() = %v, want %v", tc.sql, got, tc.want)
		}
	}
}
