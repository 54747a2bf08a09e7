package pgwire

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "modernc.org/sqlite" // reads the fixture's values for the leak check

	"countwall/config"
	"countwall/dataset"
	"countwall/proxy"
)

// badInput is one statement the firewall must refuse, with the SQLSTATE
// PostgreSQL's meaning gives it. args, when set, are bound by the extended
// protocol and interpolated by pgx in the simple one; simpleCode is the
// answer to the interpolated text where it differs.
type badInput struct {
	sql        string
	code       string
	args       []any
	simpleCode string
}

// The battery: bad inputs over both protocols, each with its SQLSTATE. It
// leaves out the lexical cases (double quotes, backslashes, comments of
// other dialects), which the planner's differential test covers.
var battery = []badInput{
	// Syntax.
	{sql: "SELEC COUNT(*) FROM people", code: "42601"},
	{sql: "SELECT COUNT(*) FORM people", code: "42601"},
	{sql: "SELECT COUNT(*)", code: "42601"},
	{sql: "SELECT COUNT(*) FROM", code: "42601"},
	{sql: "SELECT COUNT(*) FROM people WHERE", code: "42601"},
	{sql: "SELECT COUNT(*) FROM people WHERE age >", code: "42601"},
	{sql: "SELECT COUNT(*) FROM people WHERE age > 1 AND", code: "42601"},
	{sql: "SELECT COUNT(*) FROM people GROUP BY", code: "42601"},
	{sql: "SELECT COUNT(* FROM people", code: "42601"},
	{sql: "SELECT COUNT(*) FROM people WHERE (age > 1", code: "42601"},
	// Several statements: refused whole by the extended protocol, as
	// PostgreSQL refuses them in a prepared statement; run in turn by the
	// simple one up to the first that fails.
	{sql: "SELECT COUNT(*) FROM people; SELECT COUNT(*) FROM nowhere", code: "42601", simpleCode: "42P01"},
	{sql: "SELECT COUNT(*) FROM people; DROP TABLE people", code: "42601", simpleCode: "25006"},
	{sql: "FOO", code: "42601"},
	{sql: "EXPLAIN ANALYZE SELECT COUNT(*) FROM people", code: "0A000"}, // it would run the query; plain EXPLAIN is answered
	{sql: "LISTEN changes", code: "42601"},
	{sql: "SELECT COUNT(*) FROM people WHERE age IN ()", code: "42601"},
	{sql: "SELECT COUNT(*) FROM people ORDER BY", code: "42601"},
	{sql: "SELECT COUNT(*) FROM people WHERE age BETWEEN 1", code: "42601"},
	{sql: "SELECT , COUNT(*) FROM people", code: "42601"},
	{sql: "SELECT COUNT(*) FROM people WHERE sex = 'F", code: "42601"},
	{sql: "PREPARE p (nosuchtype) AS SELECT COUNT(*) FROM people", code: "42704"},
	{sql: "EXECUTE never_prepared", code: "26000"},
	{sql: "CALL refresh()", code: "42601"},
	{sql: "SELECT COUNT(*) FROM people WHERE age > 1 age < 3", code: "42601"},
	{sql: "SELECT COUNT(*) FROM people WHERE age > > 1", code: "42601"},
	{sql: "RESET", code: "42601"},
	{sql: "SELECT COUNT(*) FROM people GROUP sex", code: "42601"},
	{sql: "COUNT(*) FROM people", code: "42601"},

	// Constructs the COUNT language does not have.
	{sql: "SELECT * FROM people", code: "0A000"},
	{sql: "SELECT age FROM people", code: "0A000"},
	{sql: "SELECT SUM(sex) FROM people", code: "42883"},
	{sql: "SELECT AVG(DISTINCT age) FROM people WHERE sex = 'F'", code: "0A000"},
	{sql: "SELECT MIN(age) FROM people", code: "0A000"},
	{sql: "SELECT MAX(income) FROM people", code: "0A000"},
	{sql: "SELECT COUNT(age) FROM people", code: "0A000"},
	{sql: "SELECT COUNT(DISTINCT age) FROM people", code: "0A000"},
	{sql: "SELECT sex, COUNT(*) FROM people GROUP BY sex HAVING COUNT(*) > 10", code: "0A000"},
	{sql: "SELECT DISTINCT COUNT(*) FROM people", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people LIMIT 5", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people LIMIT 1 OFFSET 2", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people JOIN visits ON people.id = visits.visitor", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people LEFT JOIN visits ON people.id = visits.visitor", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people NATURAL JOIN visits", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people, visits", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people WHERE age IN (SELECT age FROM people)", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM (SELECT * FROM people) AS t", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people WHERE EXISTS (SELECT 1 FROM people)", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people WHERE age > (SELECT 1)", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people UNION SELECT COUNT(*) FROM people", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people UNION ALL SELECT COUNT(*) FROM visits", code: "0A000"},
	{sql: "(SELECT COUNT(*) FROM people)", code: "42601"},
	{sql: "WITH t AS (SELECT * FROM people) SELECT COUNT(*) FROM t", code: "0A000"},
	{sql: "SELECT COUNT(*) OVER (PARTITION BY sex) FROM people", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people WHERE age = income", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people WHERE age < hours", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people WHERE age = age", code: "0A000"},
	{sql: "PRAGMA table_info(people)", code: "0A000"},
	{sql: "ATTACH DATABASE 'other.db' AS other", code: "0A000"},
	{sql: "DETACH DATABASE other", code: "0A000"},
	{sql: "SELECT COUNT(*) < 10 FROM people", code: "0A000"},
	{sql: "SELECT COUNT(*) = 10 FROM people", code: "0A000"},
	{sql: "SELECT COUNT(*), COUNT(*) FROM people", code: "0A000"},
	{sql: "SELECT COUNT(*) + 1 FROM people", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people WHERE age::text = '30'", code: "0A000"},
	{sql: "SELECT suburb, COUNT(*) FROM people GROUP BY suburb", code: "0A000"},
	{sql: "SELECT sqlite_version()", code: "42601"}, // no FROM
	{sql: "SELECT COUNT(*) FROM people FOR UPDATE", code: "0A000"},

	// The firewall never writes.
	{sql: "INSERT INTO people (id) VALUES (99999)", code: "25006"},
	{sql: "insert into people select * from people", code: "25006"},
	{sql: "UPDATE people SET age = 1", code: "25006"},
	{sql: "DELETE FROM people", code: "25006"},
	{sql: "  delete from people where sex = 'F'", code: "25006"},
	{sql: "REPLACE INTO people (id) VALUES (1)", code: "25006"},
	{sql: "CREATE TABLE t (x int)", code: "25006"},
	{sql: "CREATE INDEX people_age ON people (age)", code: "25006"},
	{sql: "DROP TABLE people", code: "25006"},
	{sql: "DROP INDEX people_age", code: "25006"},
	{sql: "ALTER TABLE people ADD COLUMN x int", code: "25006"},
	{sql: "TRUNCATE people", code: "25006"},
	{sql: "GRANT SELECT ON people TO mallory", code: "25006"},
	{sql: "REVOKE SELECT ON people FROM alice", code: "25006"},
	{sql: "VACUUM", code: "25006"},
	{sql: "REINDEX people", code: "25006"},
	{sql: "ANALYZE people", code: "25006"},
	{sql: "COPY people TO STDOUT", code: "0A000"},
	{sql: "COPY people FROM STDIN", code: "25006"},

	// Unknown tables and columns.
	{sql: "SELECT COUNT(*) FROM persons", code: "42P01"},
	{sql: "SELECT COUNT(*) FROM nosuch WHERE age > 1", code: "42P01"},
	{sql: "SELECT COUNT(*) FROM sqlite_master", code: "42P01"},
	{sql: "SELECT COUNT(*) FROM peoples GROUP BY sex", code: "42P01"},
	{sql: "SELECT COUNT(*) FROM people WHERE height > 1", code: "42703"},
	{sql: "SELECT COUNT(*) FROM people WHERE age2 = 3", code: "42703"},
	{sql: "SELECT nosuch, COUNT(*) FROM people GROUP BY nosuch", code: "42703"},
	{sql: "SELECT COUNT(*) FROM people WHERE nosuch IS NULL", code: "42703"},
	{sql: "SELECT COUNT(*) FROM people WHERE nosuch IN (1, 2)", code: "42703"},
	{sql: "SELECT COUNT(*) FROM people WHERE nosuch BETWEEN 1 AND 2", code: "42703"},
	{sql: "SELECT COUNT(*) FROM visits WHERE age = 3", code: "42703"},
	{sql: "SELECT COUNT(*) FROM people WHERE clinic = 'north'", code: "42703"},
	{sql: "SELECT COUNT(*) FROM people WHERE NOT nosuch = 1", code: "42703"},

	// Literals of the wrong type.
	{sql: "SELECT COUNT(*) FROM people WHERE age = 'x'", code: "22P02"},
	{sql: "SELECT COUNT(*) FROM people WHERE suburb = 3", code: "42883"},
	{sql: "SELECT COUNT(*) FROM people WHERE age = true", code: "42804"},
	{sql: "SELECT COUNT(*) FROM people WHERE suburb = NULL::int", code: "42883"},
	{sql: "SELECT COUNT(*) FROM people WHERE age IN ('a', 'b')", code: "22P02"},
	{sql: "SELECT COUNT(*) FROM people WHERE age BETWEEN 'a' AND 'b'", code: "22P02"},
	{sql: "SELECT COUNT(*) FROM people WHERE suburb > 3", code: "42883"},
	{sql: "SELECT COUNT(*) FROM people WHERE sex IN (1, 2)", code: "42883"},
	{sql: "SELECT COUNT(*) FROM people WHERE income = 'rich'", code: "22P02"},
	{sql: "SELECT COUNT(*) FROM people WHERE hours >= 'many'", code: "22P02"},
	{sql: "SELECT COUNT(*) FROM people WHERE zip = 'abc'", code: "22P02"},
	{sql: "SELECT COUNT(*) FROM people WHERE secret = 'yes'", code: "22P02"},
	{sql: "SELECT COUNT(*) FROM people WHERE education = 12", code: "42883"},
	{sql: "SELECT COUNT(*) FROM people WHERE 'x' < age", code: "22P02"},
	{sql: "SELECT COUNT(*) FROM visits WHERE visits = 'often'", code: "22P02"},

	// Bound parameters that do not fit; interpolated by pgx in the simple
	// protocol, they become literals of the wrong type.
	{sql: "SELECT COUNT(*) FROM people WHERE age > $1", args: []any{pgtypeText("forty-two")}, code: "22P02"},
	{sql: "SELECT COUNT(*) FROM people WHERE zip = $1", args: []any{pgtypeText("abc")}, code: "22P02"},
	{sql: "SELECT COUNT(*) FROM people WHERE age BETWEEN $1 AND $2", args: []any{pgtypeText("young"), pgtypeText("old")}, code: "22P02"},
	{sql: "SELECT COUNT(*) FROM people WHERE income IN ($1, $2)", args: []any{pgtypeText("1"), pgtypeText("lots")}, code: "22P02"},
	{sql: "SELECT COUNT(*) FROM people WHERE hours < $1 AND sex = $2", args: []any{pgtypeText("x"), "F"}, code: "22P02"},

	// Grouping.
	{sql: "SELECT COUNT(*) FROM people GROUP BY sex", code: "42803"},
	{sql: "SELECT sex, COUNT(*) FROM people", code: "42803"},
	{sql: "SELECT sex, COUNT(*) AS n FROM people GROUP BY sex ORDER BY n", code: "42803"},
	{sql: "SELECT COUNT(*) FROM people GROUP BY age + 1", code: "42803"},
	{sql: "SELECT sex, age, COUNT(*) FROM people GROUP BY sex", code: "42803"},
	{sql: "SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY age", code: "42803"},
	{sql: "SELECT age, COUNT(*) FROM people GROUP BY sex", code: "42803"},
	{sql: "SELECT COUNT(*) FROM people ORDER BY sex", code: "42803"},

	// Policy: the privacy unit, LIKE and math are off; visits is strict.
	{sql: "SELECT COUNT(*) FROM people WHERE id = 3", code: "42501"},
	{sql: "SELECT COUNT(*) FROM people WHERE id IN (1, 2)", code: "42501"},
	{sql: "SELECT COUNT(*) FROM people WHERE id > 5", code: "42501"},
	{sql: "SELECT COUNT(*) FROM people WHERE id IS NULL", code: "42501"},
	{sql: "SELECT COUNT(*) FROM people WHERE age > 30 AND NOT id = 7", code: "42501"},
	{sql: "SELECT id, COUNT(*) FROM people GROUP BY id", code: "42501"},
	{sql: "SELECT COUNT(*) FROM people WHERE suburb LIKE 'sub%'", code: "42501"},
	{sql: "SELECT COUNT(*) FROM people WHERE suburb NOT LIKE '%7'", code: "42501"},
	{sql: "SELECT COUNT(*) FROM people WHERE age + 1 > 3", code: "42501"},
	{sql: "SELECT COUNT(*) FROM people WHERE abs(age - 40) < 5", code: "42501"},
	{sql: "SELECT COUNT(*) FROM people WHERE income / 1000 = 45", code: "42501"},
	{sql: "SELECT COUNT(*) FROM visits WHERE visits > 3", code: "42501"},
	{sql: "SELECT COUNT(*) FROM visits WHERE clinic = 'north' OR clinic = 'south'", code: "42501"},
	{sql: "SELECT COUNT(*) FROM visits WHERE clinic <> 'north'", code: "42501"},
	{sql: "SELECT COUNT(*) FROM visits WHERE visits BETWEEN 1 AND 3", code: "42501"},
	{sql: "SELECT COUNT(*) FROM visits WHERE NOT clinic = 'north'", code: "42501"},
	{sql: "SELECT COUNT(*) FROM visits WHERE clinic != 'south' AND visits = 2", code: "42501"},

	// Limits: IN lists of at most 5, 6 conditions, 77 groups, 2,048 bytes.
	{sql: "SELECT COUNT(*) FROM people WHERE age IN (1, 2, 3, 4, 5, 6)", code: "54000"},
	{sql: "SELECT COUNT(*) FROM people WHERE suburb NOT IN ('a', 'b', 'c', 'd', 'e', 'f', 'g')", code: "54000"},
	{sql: "SELECT COUNT(*) FROM people WHERE age > 1 AND age < 90 AND sex = 'F' AND hours > 2 AND zip > 3 AND income > 4 AND secret = 0", code: "54000"},
	{sql: "SELECT COUNT(*) FROM people WHERE age = 1 OR age = 2 OR age = 3 OR age = 4 OR age = 5 OR age = 6 OR age = 7", code: "54000"},
	{sql: "SELECT age, sex, COUNT(*) FROM people GROUP BY age, sex", code: "54000"},
	{sql: "SELECT COUNT(*) FROM people WHERE suburb = '" + strings.Repeat("y", 2100) + "'", code: "54000"},
	{sql: "SELECT COUNT(*) FROM people WHERE age > 1" + strings.Repeat(" ", 2100), code: "54000"},

	// Settings.
	{sql: "SET nosuch = 1", code: "42704"},
	{sql: "SET SESSION nosuch TO 'x'", code: "42704"},
	{sql: "SHOW nosuch", code: "42704"},
	{sql: "SELECT current_setting('nosuch')", code: "42704"},
	{sql: "SET epsilon = 99", code: "22023"},
	{sql: "SET epsilon = 0", code: "22023"},
	{sql: "SET epsilon = -1", code: "22023"},
	{sql: "SET epsilon TO 'abc'", code: "22023"},
	{sql: "SET delta = 1", code: "22023"},
	{sql: "SET delta = 'x'", code: "22023"},

	// Catalog queries beyond schema discovery: relations and functions the
	// catalog does not model, and protected tables joined to the catalog.
	{sql: "SELECT COUNT(*) FROM pg_catalog.pg_authid", code: "0A000"},
	{sql: "SELECT pg_sleep(1)", code: "0A000"},
	{sql: "SELECT pg_read_file('/etc/passwd')", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people JOIN pg_catalog.pg_class c ON c.relname = people.suburb", code: "0A000"},
	{sql: "SELECT COUNT(*) FROM people WHERE suburb = pg_backend_pid()", code: "0A000"},
}

// batteryServer serves a people table and a small strict visits table
// with the battery's policy.
func batteryServer(t *testing.T) (*testServer, []string) {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "battery.db")
	ctx := context.Background()
	if err := dataset.GeneratePeople(ctx, db, dataset.PeopleOptions{Rows: 2000, Seed: 11}, dataset.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, "visits.csv")
	if err := os.WriteFile(csv, []byte("visitor,clinic,visits\n1,clinic_northgate,3\n2,clinic_southbank,1\n3,clinic_northgate,7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.LoadCSV(ctx, dataset.LoadOptions{CSVPath: csv, DBPath: db, Table: "visits", Unit: "visitor"}); err != nil {
		t.Fatal(err)
	}
	verifier, err := NewVerifier(testPassword, 4096)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`database: %s
state: %s
mechanism: {name: exact}
analysts:
  %s: {password: %q}
policy: {max_in_list: 5, max_conditions: 6, max_groups: 77, max_statement_bytes: 2048}
tables:
  people:
    privacy_unit: id
    domains:
      sex: [F, M]
      age: {min: 0, max: 100}
  visits:
    privacy_unit: visitor
    policy: {strict: true}
`, db, filepath.Join(dir, "state.db"), testAnalyst, verifier)
	path := filepath.Join(dir, "countwall.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	engine, err := proxy.Open(ctx, cfg, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(func(a string) Session { return engine.NewSession(a) }, Options{
		Verifier: func(a string) (string, bool) {
			an, ok := engine.Config().Analysts[a]
			return an.Password, ok
		},
		QueryTimeout: cfg.Server.QueryTimeout,
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l) //nolint:errcheck // ends with ErrServerClosed at cleanup
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx) //nolint:errcheck // best effort in cleanup
		engine.Close()
	})
	return &testServer{engine: engine, srv: srv, addr: l.Addr().String(), cfg: cfg}, storedValues(t, db)
}

// storedValues reads, read-only, the values an error must never show
// unless the statement typed them: every suburb, category and clinic, and
// every income of five digits or more (shorter numbers occur in any text).
func storedValues(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT DISTINCT suburb FROM people UNION SELECT DISTINCT education FROM people
		UNION SELECT DISTINCT marital FROM people UNION SELECT DISTINCT occupation FROM people
		UNION SELECT DISTINCT CAST(income AS TEXT) FROM people WHERE income >= 10000
		UNION SELECT DISTINCT clinic FROM visits`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var values []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		values = append(values, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(values) < 1000 {
		t.Fatalf("read %d stored values, expected the suburbs and incomes at least", len(values))
	}
	return values
}

// leaked returns the stored values an error shows that the statement did
// not type.
func leaked(pgErr *pgconn.PgError, typed string, values []string) []string {
	text := strings.Join([]string{pgErr.Message, pgErr.Detail, pgErr.Hint}, "\n")
	var out []string
	for _, v := range values {
		if strings.Contains(text, v) && !strings.Contains(typed, v) {
			out = append(out, v)
		}
	}
	return out
}

func TestBadInputBattery(t *testing.T) {
	ts, values := batteryServer(t)
	ctx := context.Background()
	seen := map[string]bool{}
	for _, b := range battery {
		key := b.sql + fmt.Sprint(b.args)
		if seen[key] {
			t.Errorf("the battery lists %.60q twice", b.sql)
		}
		seen[key] = true
	}
	for _, m := range []struct {
		name string
		mode pgx.QueryExecMode
	}{{"simple", pgx.QueryExecModeSimpleProtocol}, {"extended", pgx.QueryExecModeCacheStatement}} {
		t.Run(m.name, func(t *testing.T) {
			conn := ts.connect(t, m.mode)
			for _, b := range battery {
				want := b.code
				if m.mode == pgx.QueryExecModeSimpleProtocol && b.simpleCode != "" {
					want = b.simpleCode
				}
				rows, err := conn.Query(ctx, b.sql, b.args...)
				if err == nil {
					rows.Close()
					err = rows.Err()
				}
				var pgErr *pgconn.PgError
				if !errors.As(err, &pgErr) {
					t.Errorf("%.70q: %v, want SQLSTATE %s", b.sql, err, want)
					continue
				}
				if pgErr.Code != want {
					t.Errorf("%.70q: %s %q, want SQLSTATE %s", b.sql, pgErr.Code, pgErr.Message, want)
				}
				if pgErr.Severity != "ERROR" {
					t.Errorf("%.70q: severity %s, want ERROR: a refusal must not end the session", b.sql, pgErr.Severity)
				}
				typed := b.sql + fmt.Sprint(b.args...)
				if l := leaked(pgErr, typed, values); len(l) > 0 {
					t.Errorf("%.70q: the error shows stored values it was not given %q: %q (hint %q)", b.sql, l, pgErr.Message, pgErr.Hint)
				}
			}
			// The session is still usable after every refusal.
			var n int64
			if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM people").Scan(&n); err != nil || n != 2000 {
				t.Errorf("after the battery: count %d, %v", n, err)
			}
		})
	}
}

// Protocol-level bad inputs that only the extended protocol can carry,
// sent through pgconn's API.
func TestBadProtocolInputs(t *testing.T) {
	ts, values := batteryServer(t)
	ctx := context.Background()
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement).PgConn()
	if _, err := conn.Prepare(ctx, "by_age", "SELECT COUNT(*) FROM people WHERE age > $1", nil); err != nil {
		t.Fatal(err)
	}
	const byAge = "SELECT COUNT(*) FROM people WHERE age > $1"
	int8OID, float4OID, boolOID := uint32(20), uint32(700), uint32(16)
	tests := []struct {
		name string
		run  func() error
		code string
	}{
		{"unknown prepared statement", func() error {
			return conn.ExecPrepared(ctx, "nosuch", nil, nil, nil).Read().Err
		}, "26000"},
		{"prepared statement name taken", func() error {
			_, err := conn.Prepare(ctx, "by_age", byAge, nil)
			return err
		}, "42P05"},
		{"too few parameters", func() error {
			return conn.ExecPrepared(ctx, "by_age", nil, nil, nil).Read().Err
		}, "08P01"},
		{"too many parameters", func() error {
			return conn.ExecParams(ctx, byAge, [][]byte{[]byte("1"), []byte("2")}, nil, nil, nil).Read().Err
		}, "08P01"},
		{"parameter format 3", func() error {
			return conn.ExecParams(ctx, byAge, [][]byte{[]byte("1")}, nil, []int16{3}, nil).Read().Err
		}, "08P01"},
		{"two parameter formats for one parameter", func() error {
			return conn.ExecParams(ctx, byAge, [][]byte{[]byte("1")}, nil, []int16{0, 0}, nil).Read().Err
		}, "08P01"},
		{"result format 2", func() error {
			return conn.ExecParams(ctx, byAge, [][]byte{[]byte("1")}, nil, nil, []int16{2}).Read().Err
		}, "08P01"},
		{"three result formats for one column", func() error {
			return conn.ExecParams(ctx, byAge, [][]byte{[]byte("1")}, nil, nil, []int16{0, 1, 0}).Read().Err
		}, "08P01"},
		{"binary int8 of 3 bytes", func() error {
			return conn.ExecParams(ctx, byAge, [][]byte{{0, 0, 1}}, []uint32{int8OID}, []int16{1}, nil).Read().Err
		}, "08P01"}, // insufficient data left in message, as PostgreSQL says
		{"binary int8 of 9 bytes", func() error {
			return conn.ExecParams(ctx, byAge, [][]byte{{0, 0, 0, 0, 0, 0, 0, 0, 1}}, []uint32{int8OID}, []int16{1}, nil).Read().Err
		}, "22P03"},
		{"binary float4 of 2 bytes", func() error {
			return conn.ExecParams(ctx, byAge, [][]byte{{0, 1}}, []uint32{float4OID}, []int16{1}, nil).Read().Err
		}, "08P01"},
		{"binary bool", func() error {
			return conn.ExecParams(ctx, byAge, [][]byte{{1}}, []uint32{boolOID}, []int16{1}, nil).Read().Err
		}, "42883"}, // bigint > boolean: no such operator
		{"NULL declared text for a comparison", func() error {
			return conn.ExecParams(ctx, byAge, [][]byte{nil}, []uint32{25}, nil, nil).Read().Err
		}, "42883"}, // bigint > text: no such operator, NULL or not
		{"parameter beyond the statement's", func() error {
			return conn.ExecParams(ctx, "SELECT COUNT(*) FROM people WHERE age > $2", [][]byte{[]byte("1"), []byte("2")}, nil, nil, nil).Read().Err
		}, "42P18"}, // $1's type cannot be determined
		{"parameter $0", func() error {
			return conn.ExecParams(ctx, "SELECT COUNT(*) FROM people WHERE age > $0", nil, nil, nil, nil).Read().Err
		}, "42601"},
		{"parameter as the whole condition", func() error {
			return conn.ExecParams(ctx, "SELECT COUNT(*) FROM people WHERE $1", [][]byte{[]byte("1")}, nil, nil, nil).Read().Err
		}, "0A000"},
	}
	for _, tc := range tests {
		err := tc.run()
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != tc.code {
			t.Errorf("%s: %v, want SQLSTATE %s", tc.name, err, tc.code)
			continue
		}
		if l := leaked(pgErr, "", values); len(l) > 0 {
			t.Errorf("%s: the error shows stored values %q: %q", tc.name, l, pgErr.Message)
		}
	}
	if err := conn.Exec(ctx, "SELECT COUNT(*) FROM people").Close(); err != nil {
		t.Errorf("after the protocol errors: %v", err)
	}
}

func TestLeakCheck(t *testing.T) {
	values := []string{"suburb_0007", "45600"}
	tests := []struct {
		message, hint, typed string
		want                 []string
	}{
		{`column "age" does not exist`, "", "SELECT COUNT(*) FROM people WHERE agee = 1", nil},
		{`no such suburb suburb_0007`, "", "SELECT COUNT(*) FROM people WHERE age = 1", []string{"suburb_0007"}},
		{`value "suburb_0007" is text`, "", "SELECT COUNT(*) FROM people WHERE age = 'suburb_0007'", nil},
		{"bad", "try 45600", "SELECT 1", []string{"45600"}},
	}
	for _, tc := range tests {
		got := leaked(&pgconn.PgError{Message: tc.message, Hint: tc.hint}, tc.typed, values)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("leaked(%q, %q) = %q, want %q", tc.message, tc.typed, got, tc.want)
		}
	}
}
