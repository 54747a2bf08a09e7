package pgwire

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestQueryWithSeveralStatements: a Query message holding several
// statements runs each in turn and answers each (psql -c "SET ...;
// SELECT ...", pgx's and node-postgres' simple batches), up to the first
// that fails, whose error ends the message, as in PostgreSQL.
func TestQueryWithSeveralStatements(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	ctx := context.Background()
	pg := ts.connect(t, 0).PgConn()

	results, err := pg.Exec(ctx, "SELECT COUNT(*) FROM people WHERE sex = 'F'; SHOW mechanism;; SELECT COUNT(*) FROM people").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, r := range results {
		tags = append(tags, r.CommandTag.String())
	}
	if want := []string{"SELECT 1", "SHOW", "SELECT 1"}; !slices.Equal(tags, want) {
		t.Errorf("tags %q, want %q", tags, want)
	}
	if len(results) == 3 && (string(results[1].Rows[0][0]) != "exact" || string(results[2].Rows[0][0]) != "5000") {
		t.Errorf("answers %q and %q, want exact and the table's 5000", results[1].Rows, results[2].Rows)
	}

	results, err = pg.Exec(ctx, "SELECT COUNT(*) FROM people; SELECT COUNT(*) FROM nowhere; SHOW mechanism").ReadAll()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42P01" {
		t.Errorf("the failing statement gave %v, want 42P01", err)
	}
	tags = nil
	for _, r := range results {
		tags = append(tags, r.CommandTag.String())
	}
	if len(tags) == 0 || tags[0] != "SELECT 1" || slices.Contains(tags, "SHOW") {
		t.Errorf("tags %q: want the first answered and the third not run", tags)
	}
}
