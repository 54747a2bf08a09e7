package pgwire

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestSavepoints: SAVEPOINT, RELEASE and ROLLBACK TO keep a block's state
// as PostgreSQL keeps it (psycopg 3's introspection inside a transaction
// sends them): ROLLBACK TO runs in a failed block and ends its failure, a
// name the block never saved is 3B001, and outside a block they are 25P01.
// Every step is checked in every protocol mode pgx speaks.
func TestSavepoints(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	ctx := context.Background()
	steps := []struct {
		sql, code string
		status    byte
	}{
		{"SAVEPOINT a", "25P01", 'I'},
		{"BEGIN", "", 'T'},
		{"SAVEPOINT a", "", 'T'},
		{"SAVEPOINT b", "", 'T'},
		{"SELECT COUNT(*) FROM nowhere", "42P01", 'E'},
		{"SELECT COUNT(*) FROM people", "25P02", 'E'},
		{"ROLLBACK TO SAVEPOINT b", "", 'T'},
		{"SELECT COUNT(*) FROM people", "", 'T'},
		{"RELEASE a", "", 'T'}, // drops b with it
		{"ROLLBACK TO b", "3B001", 'E'},
		{"ROLLBACK TRANSACTION TO SAVEPOINT nobody", "3B001", 'E'},
		{"ROLLBACK", "", 'I'},
		{"RELEASE SAVEPOINT a", "25P01", 'I'},
		{"SAVEPOINT", "42601", 'I'},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := ts.connect(t, m.mode)
			for _, s := range steps {
				rows, err := conn.Query(ctx, s.sql)
				if err == nil {
					rows.Close()
					err = rows.Err()
				}
				var pe *pgconn.PgError
				switch {
				case s.code == "" && err != nil:
					t.Errorf("%s: %v", s.sql, err)
				case s.code != "" && (!errors.As(err, &pe) || pe.Code != s.code):
					t.Errorf("%s: %v, want SQLSTATE %s", s.sql, err, s.code)
				}
				if got := conn.PgConn().TxStatus(); got != s.status {
					t.Errorf("%s: transaction status %c, want %c", s.sql, got, s.status)
				}
			}
		})
	}
}
