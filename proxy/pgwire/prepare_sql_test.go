package pgwire

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestPrepareAndExecuteInSQL: PREPARE keeps a query under a name (in the
// namespace the protocol's Parse uses), EXECUTE runs it with constant
// arguments (cast to the parameters' types as PostgreSQL casts them; any
// other expression refused, 0A000) and answers as the query itself answers, DEALLOCATE drops it;
// PostgreSQL's refusals keep their SQLSTATEs.
func TestPrepareAndExecuteInSQL(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	ctx := context.Background()
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	var want int64
	if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM people WHERE age > 40 AND sex = 'F'").Scan(&want); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		sql, first, tag, code string
	}{
		{"PREPARE q AS SELECT COUNT(*) FROM people WHERE age > $1 AND sex = $2", "", "PREPARE", ""},
		{"PREPARE q AS SELECT COUNT(*) FROM people", "", "", "42P05"},
		{"EXECUTE q (40, 'F')", strconv.FormatInt(want, 10), "SELECT 1", ""},
		{"EXECUTE q (40)", "", "", "42601"},
		{"EXECUTE q ('forty', 'F')", "", "", "22P02"},
		{"EXECUTE q (40.4, 'F')", strconv.FormatInt(want, 10), "SELECT 1", ""},
		{"EXECUTE q (CAST(40 AS bigint), 'F'::text)", strconv.FormatInt(want, 10), "SELECT 1", ""},
		{"EXECUTE q (39 + 1, 'F')", "", "", "0A000"},
		{"EXECUTE q (abs(40), 'F')", "", "", "0A000"},
		{"EXECUTE q (age, 'F')", "", "", "42703"},
		{"EXECUTE q ($1, 'F')", "", "", "42P02"},
		{"EXECUTE q (40, 'F'", "", "", "42601"},
		{"EXECUTE q (40, )", "", "", "42601"},
		{"PREPARE bad AS SELECT COUNT(*) FROM nowhere", "", "", "42P01"},
		{"EXECUTE bad", "", "", "26000"},
		{"DEALLOCATE q", "", "DEALLOCATE", ""},
		{"EXECUTE q (40, 'F')", "", "", "26000"},
	}
	for _, s := range steps {
		res, err := conn.PgConn().Exec(ctx, s.sql).ReadAll()
		var pe *pgconn.PgError
		switch {
		case s.code != "":
			if !errors.As(err, &pe) || pe.Code != s.code {
				t.Errorf("%s: %v, want SQLSTATE %s", s.sql, err, s.code)
			}
		case err != nil:
			t.Errorf("%s: %v", s.sql, err)
		case res[0].CommandTag.String() != s.tag:
			t.Errorf("%s: tag %q, want %q", s.sql, res[0].CommandTag, s.tag)
		case s.first != "" && (len(res[0].Rows) != 1 || string(res[0].Rows[0][0]) != s.first):
			t.Errorf("%s: rows %q, want %s", s.sql, res[0].Rows, s.first)
		}
	}
}
