package pgwire

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// After an error inside BEGIN, PostgreSQL refuses every statement but
// COMMIT and ROLLBACK with 25P02, and ReadyForQuery reports 'T', 'E' and
// 'I' as the block goes on, fails and ends. countwall does the same over
// both protocols.
func TestFailedTransactionBlock(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	ctx := context.Background()
	type step struct {
		sql    string
		args   []any
		code   string // expected SQLSTATE, "" for success
		tag    string // expected command tag on success
		status byte   // transaction status after the step
	}
	script := []step{
		{sql: "SELECT COUNT(*) FROM people", tag: "SELECT 1", status: 'I'},
		{sql: "COMMIT", tag: "COMMIT", status: 'I'}, // with a warning: no transaction in progress
		{sql: "BEGIN", tag: "BEGIN", status: 'T'},
		{sql: "SELECT COUNT(*) FROM people WHERE age > $1", args: []any{30}, tag: "SELECT 1", status: 'T'},
		{sql: "BEGIN", tag: "BEGIN", status: 'T'}, // with a warning: already in progress
		{sql: "SELECT COUNT(*) FROM nosuch", code: "42P01", status: 'E'},
		{sql: "SELECT COUNT(*) FROM people", code: "25P02", status: 'E'},
		{sql: "SELECT COUNT(*) FROM people WHERE age > $1", args: []any{30}, code: "25P02", status: 'E'},
		{sql: "SHOW budget", code: "25P02", status: 'E'},
		{sql: "SET epsilon = 0.2", code: "25P02", status: 'E'},
		{sql: "BEGIN", code: "25P02", status: 'E'},
		{sql: "ROLLBACK", tag: "ROLLBACK", status: 'I'},
		{sql: "SELECT COUNT(*) FROM people", tag: "SELECT 1", status: 'I'},
		{sql: "BEGIN", tag: "BEGIN", status: 'T'},
		{sql: "DELETE FROM people", code: "25006", status: 'E'},
		{sql: "/* end it */ COMMIT", tag: "ROLLBACK", status: 'I'}, // COMMIT of a failed block rolls back
		{sql: "BEGIN", tag: "BEGIN", status: 'T'},
		{sql: "COMMIT", tag: "COMMIT", status: 'I'},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			cfg, err := pgx.ParseConfig(ts.dsn(testAnalyst, testPassword))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = m.mode
			var warnings []string
			cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
				if n.Severity == "WARNING" {
					warnings = append(warnings, n.Code+" "+n.Message)
				}
			}
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			for i, s := range script {
				tag, err := conn.Exec(ctx, s.sql, s.args...)
				var pgErr *pgconn.PgError
				switch {
				case s.code == "" && err != nil:
					t.Errorf("step %d %q: %v", i, s.sql, err)
				case s.code == "" && tag.String() != s.tag:
					t.Errorf("step %d %q: tag %q, want %q", i, s.sql, tag, s.tag)
				case s.code != "" && (!errors.As(err, &pgErr) || pgErr.Code != s.code):
					t.Errorf("step %d %q: error %v, want SQLSTATE %s", i, s.sql, err, s.code)
				}
				if s.code == "25P02" && pgErr != nil && pgErr.Message != "current transaction is aborted, commands ignored until end of transaction block" {
					t.Errorf("step %d: 25P02 message %q", i, pgErr.Message)
				}
				if got := conn.PgConn().TxStatus(); got != s.status {
					t.Errorf("step %d %q: transaction status %c, want %c", i, s.sql, got, s.status)
				}
			}
			want := []string{"25P01 there is no transaction in progress", "25001 there is already a transaction in progress"}
			if strings.Join(warnings, "|") != strings.Join(want, "|") {
				t.Errorf("warnings %q, want %q", warnings, want)
			}
		})
	}
}

// pgx's own transaction API sees the failed block and rolls it back.
func TestPgxTransactionAfterError(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	ctx := context.Background()
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT COUNT(*) FROM people WHERE height = 1"); err == nil {
		t.Fatal("unknown column answered")
	}
	var n int64
	err = tx.QueryRow(ctx, "SELECT COUNT(*) FROM people").Scan(&n)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "25P02" {
		t.Errorf("in the failed block: %v, want 25P02", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM people").Scan(&n); err != nil || n != 5000 {
		t.Errorf("after rollback: %d, %v", n, err)
	}
}

// psql runs a script statement by statement: after the error inside BEGIN
// it prints PostgreSQL's 25P02 message, and after ROLLBACK it answers again.
func TestPsqlFailedTransactionBlock(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	out := psqlScript(t, ts, `BEGIN;
SELECT COUNT(*) FROM nosuch;
SELECT COUNT(*) AS inside FROM people;
ROLLBACK;
SELECT COUNT(*) AS after FROM people;
`)
	for _, want := range []string{
		"BEGIN",
		`ERROR:  relation "nosuch" does not exist`,
		"ERROR:  current transaction is aborted, commands ignored until end of transaction block",
		"ROLLBACK",
		" after \n-------\n  5000\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("psql output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "inside") {
		t.Errorf("a statement inside the failed block was answered:\n%s", out)
	}
}
