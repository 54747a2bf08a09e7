package pgwire

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"countwall/internal/pgtest"
)

// The NULL differential test: comparisons with NULL, written or bound,
// follow PostgreSQL's three-valued logic (`age = NULL` counts no row, nor
// does its NOT; `IN ('a', NULL)` counts the a rows and `NOT IN ('a',
// NULL)` none; a BETWEEN with a NULL end), and IS [NOT] DISTINCT FROM is
// two-valued. Each statement runs against countwall (exact) and
// PostgreSQL on the forms test's tables, through pgconn with parameters
// bound NULL, through pgx's own binding of Go nils, and through psycopg2,
// which pastes None into the text as NULL.

// nullCase is a statement and its parameters; nil is NULL.
type nullCase struct {
	sql  string
	args []*string
	oids []uint32 // declared types, 0 where unspecified
}

func nullCorpus() []nullCase {
	w := "SELECT COUNT(*) FROM m WHERE "
	var out []nullCase
	for _, cond := range []string{
		"age = NULL", "NOT (age = NULL)", "age <> NULL", "age < NULL", "score > NULL", "label = NULL", "NULL = age",
		"age IN (0, NULL)", "age NOT IN (0, NULL)", "NOT (age IN (0, NULL))", "NOT (age NOT IN (0, NULL))", "age IN (NULL)",
		"age IN (NULL, NULL)", "age NOT IN (NULL)", "label IN ('a', NULL)", "label NOT IN ('a', NULL)", "score IN (0.1, NULL)",
		"age IN (30, NULL, 31)", "age NOT IN (30, NULL, 31)", "age IN (NULL, 1.5)",
		"age BETWEEN 0 AND NULL", "age BETWEEN NULL AND 30", "age NOT BETWEEN 0 AND NULL", "age NOT BETWEEN NULL AND 30",
		"NOT (age BETWEEN 0 AND NULL)", "NOT (age NOT BETWEEN 0 AND NULL)", "age BETWEEN NULL AND NULL", "age NOT BETWEEN NULL AND NULL",
		"age = NULL OR label = 'a'", "NOT (age = NULL OR label = 'a')", "NOT (age = NULL AND label = 'a')", "age = NULL AND label = 'a'",
		"age = NULL::int", "age = CAST(NULL AS bigint)", "label = NULL::text", "age = NULL::text", "label = NULL::int",
		"age IS NOT DISTINCT FROM 30", "age IS DISTINCT FROM 30", "age IS NOT DISTINCT FROM NULL", "age IS DISTINCT FROM NULL",
		"NOT (age IS DISTINCT FROM 0)", "NOT age IS DISTINCT FROM 0", "label IS DISTINCT FROM 'a'", "label IS NOT DISTINCT FROM 'a'",
		"score IS DISTINCT FROM 0.1", "age IS DISTINCT FROM 30.5", "age IS NOT DISTINCT FROM 30.5", "age IS DISTINCT FROM 'x'",
		"label IS DISTINCT FROM 3", "age IS DISTINCT FROM 30 AND label IS NOT DISTINCT FROM NULL", "age IS DISTINCT FROM '30'::int",
		"age = ANY(ARRAY[NULL, 30])",
	} {
		out = append(out, nullCase{sql: w + cond})
	}
	for _, cond := range []string{"age = $1", "age <> $1", "NOT (age = $1)", "label = $1", "score < $1", "age IN ($1, 30)",
		"age NOT IN ($1, 30)", "age BETWEEN $1 AND 30", "age NOT BETWEEN 0 AND $1", "age IS NOT DISTINCT FROM $1",
		"age IS DISTINCT FROM $1", "label IS DISTINCT FROM $1", "age = $1::int"} {
		out = append(out, nullCase{sql: w + cond, args: []*string{nil}, oids: []uint32{0}})
	}
	out = append(out, nullCase{sql: w + "age = $1", args: []*string{nil}, oids: []uint32{25}},
		nullCase{sql: w + "age = $1", args: []*string{nil}, oids: []uint32{20}},
		nullCase{sql: w + "label IS DISTINCT FROM $1", args: []*string{nil}, oids: []uint32{25}},
		// Every cell of sex's domain has rows: a domain's empty cells are
		// answered (as 0) where PostgreSQL has no row.
		nullCase{sql: "SELECT sex, COUNT(*) FROM g WHERE age IN (1, NULL) GROUP BY sex ORDER BY sex"},
		nullCase{sql: "SELECT COUNT(*) FROM g WHERE age NOT IN (1, NULL)"},
		nullCase{sql: "SELECT sex, COUNT(*) FROM g WHERE age IS DISTINCT FROM 1 GROUP BY sex ORDER BY sex"})
	return out
}

// formsServers fills tables m and g alike in SQLite and PostgreSQL and
// returns countwall serving them with the exact mechanism, and
// PostgreSQL's URL.
// formsConns are the servers of formsServers and a connection to each,
// closed when the test ends.
func formsConns(t *testing.T) (ts *testServer, url string, mine, theirs *pgconn.PgConn) {
	t.Helper()
	ts, url = formsServers(t)
	ctx := context.Background()
	mine, err := pgconn.Connect(ctx, ts.dsn(testAnalyst, testPassword))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mine.Close(ctx) })
	if theirs, err = pgconn.Connect(ctx, url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { theirs.Close(ctx) })
	return ts, url, mine, theirs
}

func formsServers(t *testing.T) (*testServer, string) {
	t.Helper()
	srv := pgtest.Server(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "m.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE m (id INTEGER NOT NULL, age INTEGER, score REAL, label TEXT);
		CREATE TABLE g (id INTEGER NOT NULL, sex TEXT, age INTEGER);` + groupRows); err != nil {
		t.Fatal(err)
	}
	url := srv.NewDatabase(t)
	if err := pgtest.ExecURL(url, `CREATE TABLE m (id bigint NOT NULL, age bigint, score double precision, label text);
		CREATE TABLE g (id bigint NOT NULL, sex text, age bigint);`+groupRows); err != nil {
		t.Fatal(err)
	}
	pgdb, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer pgdb.Close()
	for _, r := range typedRows {
		if _, err := db.Exec(`INSERT INTO m VALUES (?, ?, ?, ?)`, r...); err != nil {
			t.Fatal(err)
		}
		if _, err := pgdb.Exec(`INSERT INTO m VALUES ($1, $2, $3, $4)`, r...); err != nil {
			t.Fatal(err)
		}
	}
	return startFormsServer(t, dir, path), url
}

func TestPostgresNullComparisonsDifferential(t *testing.T) {
	ctx := context.Background()
	ts, url, mine, theirs := formsConns(t)
	answered := 0
	for _, c := range nullCorpus() {
		fc := formCase{sql: c.sql, oids: c.oids}
		for _, a := range c.args {
			fc.values = append(fc.values, bytesOf(a))
		}
		a, b := formExec(ctx, mine, fc), formExec(ctx, theirs, fc)
		if !formsAgree(fc, a, b) {
			t.Errorf("%s %v: countwall %+v, PostgreSQL %+v", c.sql, c.oids, a, b)
		} else if a.code == "" {
			answered++
		}
		if len(c.oids) > 0 {
			da, errA := mine.Prepare(ctx, "", c.sql, c.oids)
			dp, errB := theirs.Prepare(ctx, "", c.sql, c.oids)
			if (errA == nil) != (errB == nil) || (errA == nil && fmt.Sprint(da.ParamOIDs) != fmt.Sprint(dp.ParamOIDs)) {
				t.Errorf("%s %v: countwall describes %v (%v), PostgreSQL %v (%v)", c.sql, c.oids, da, errA, dp, errB)
			}
		}
	}
	if answered < 60 {
		t.Errorf("only %d statements answered alike", answered)
	}
	t.Logf("%d statements alike, %d of them answered", len(nullCorpus()), answered)
	t.Run("pgx", func(t *testing.T) { nullsThroughPgx(t, ts.dsn(testAnalyst, testPassword), url) })
	t.Run("psycopg2", func(t *testing.T) { nullsThroughPsycopg2(t, ts, url) })
}

func bytesOf(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

// nullDriverCases are bound by each driver from its own NULL: pgx's Go
// nil (untyped, and a typed nil pointer), psycopg2's None.
var nullDriverCases = []string{
	"SELECT COUNT(*) FROM m WHERE age = $1", "SELECT COUNT(*) FROM m WHERE NOT (age = $1)",
	"SELECT COUNT(*) FROM m WHERE label IN ($1, 'a')", "SELECT COUNT(*) FROM m WHERE label NOT IN ($1, 'a')",
	"SELECT COUNT(*) FROM m WHERE age BETWEEN 0 AND $1", "SELECT COUNT(*) FROM m WHERE age NOT BETWEEN 0 AND $1",
	"SELECT COUNT(*) FROM m WHERE age IS DISTINCT FROM $1", "SELECT COUNT(*) FROM m WHERE age IS NOT DISTINCT FROM $1",
}

// pgxCounts runs each statement with a NULL bound by pgx and returns
// what each gave: a count or a SQLSTATE.
func pgxCounts(t *testing.T, dsn string, arg any) []string {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var out []string
	for _, q := range nullDriverCases {
		var n int64
		if err := conn.QueryRow(ctx, q, arg).Scan(&n); err != nil {
			out = append(out, fmt.Sprintf("%s: error %s", q, sqlState(err)))
			continue
		}
		out = append(out, fmt.Sprintf("%s: %d", q, n))
	}
	return out
}

func sqlState(err error) string {
	if pe, ok := err.(*pgconn.PgError); ok {
		return pe.Code
	}
	return err.Error()
}

func nullsThroughPgx(t *testing.T, mine, theirs string) {
	for _, arg := range []any{nil, (*int64)(nil)} {
		a, b := pgxCounts(t, mine, arg), pgxCounts(t, theirs, arg)
		if strings.Contains(strings.Join(b, "\n"), "error") {
			t.Errorf("PostgreSQL refused a statement bound NULL by pgx:\n%s", strings.Join(b, "\n"))
		}
		if strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("pgx with %#v:\ncountwall\n%s\nPostgreSQL\n%s", arg, strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
	}
}

// nullsScript runs psycopg2's statements (%s placeholders, None bound) and
// prints a count or a SQLSTATE for each.
const nullsScript = `
import sys, json, psycopg2
conn = psycopg2.connect(sys.argv[1])
conn.autocommit = True
cur = conn.cursor()
for q in json.loads(sys.argv[2]):
    try:
        cur.execute(q, (None,))
        print(q, cur.fetchone()[0])
    except psycopg2.Error as e:
        print(q, e.pgcode)
`

func nullsThroughPsycopg2(t *testing.T, ts *testServer, url string) {
	needPsycopg2(t)
	stmts := make([]string, len(nullDriverCases))
	for i, q := range nullDriverCases {
		stmts[i] = strings.ReplaceAll(q, "$1", "%s")
	}
	js, err := json.Marshal(stmts)
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	quote := func(s string) string { return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'" }
	mineDSN := fmt.Sprintf("host=%s port=%s user=%s password=%s dbname=countwall", host, port, quote(testAnalyst), quote(testPassword))
	var got [2]string
	for i, dsn := range []string{mineDSN, url} {
		out, err := exec.Command("/usr/bin/python3", "-c", nullsScript, dsn, string(js)).CombinedOutput()
		if err != nil {
			t.Fatalf("psycopg2: %v\n%s", err, out)
		}
		got[i] = string(out)
	}
	if strings.Count(got[1], "\n") != len(stmts) || strings.Contains(got[1], " 42") {
		t.Errorf("PostgreSQL did not count every statement psycopg2 sent:\n%s", got[1])
	}
	if got[0] != got[1] {
		t.Errorf("psycopg2:\ncountwall\n%s\nPostgreSQL\n%s", got[0], got[1])
	}
}
