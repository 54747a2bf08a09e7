package pgwire

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestDeallocate: DEALLOCATE drops a statement the session prepared, as
// psycopg 3 does by itself after its hundredth; DEALLOCATE ALL drops every
// one; a name the session never prepared is refused with PostgreSQL's
// 26000; and the statement works in every protocol mode pgx speaks.
func TestDeallocate(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	ctx := context.Background()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := ts.connect(t, m.mode)
			pg := conn.PgConn()
			for _, name := range []string{"s1", "s2", "S3"} {
				if _, err := pg.Prepare(ctx, name, "SELECT COUNT(*) FROM people WHERE age > $1", nil); err != nil {
					t.Fatalf("prepare %s: %v", name, err)
				}
			}
			steps := []struct {
				sql, tag, code string
			}{
				{"DEALLOCATE s1", "DEALLOCATE", ""},
				{"DEALLOCATE s1", "", "26000"}, // gone
				{"DEALLOCATE PREPARE s2", "DEALLOCATE", ""},
				{"DEALLOCATE s3", "", "26000"}, // unquoted folds to s3; the statement is S3
				{`DEALLOCATE "S3"`, "DEALLOCATE", ""},
				{"DEALLOCATE nobody", "", "26000"},
				{"DEALLOCATE", "", "42601"},
				{"DEALLOCATE ALL", "DEALLOCATE ALL", ""},
			}
			for _, s := range steps {
				tag, err := conn.Exec(ctx, s.sql)
				var pe *pgconn.PgError
				switch {
				case s.code == "" && err != nil:
					t.Errorf("%s: %v", s.sql, err)
				case s.code == "" && tag.String() != s.tag:
					t.Errorf("%s: tag %q, want %q", s.sql, tag.String(), s.tag)
				case s.code != "" && (!errors.As(err, &pe) || pe.Code != s.code):
					t.Errorf("%s: %v, want SQLSTATE %s", s.sql, err, s.code)
				}
			}
			for _, name := range []string{"s1", "s2", "S3"} {
				res := pg.ExecPrepared(ctx, name, [][]byte{[]byte("30")}, nil, nil).Read()
				var pe *pgconn.PgError
				if !errors.As(res.Err, &pe) || pe.Code != "26000" {
					t.Errorf("executing %s after DEALLOCATE: %v, want 26000", name, res.Err)
				}
			}
			// ALL drops statements prepared after the others too.
			if _, err := pg.Prepare(ctx, "s4", "SELECT COUNT(*) FROM people", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(ctx, "DEALLOCATE ALL"); err != nil {
				t.Fatal(err)
			}
			if res := pg.ExecPrepared(ctx, "s4", nil, nil, nil).Read(); res.Err == nil {
				t.Error("s4 still runs after DEALLOCATE ALL")
			}
		})
	}
}
