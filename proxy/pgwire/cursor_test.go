package pgwire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestCursors: DECLARE answers its query once (one run, one charge, one
// audit row) and FETCH reads the answer in pieces, MOVE skips, CLOSE drops;
// a cursor without HOLD needs a block and ends with it; what PostgreSQL
// refuses is refused with its SQLSTATE.
func TestCursors(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	ctx := context.Background()
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	query := "SELECT age, COUNT(*) FROM people WHERE age BETWEEN 30 AND 34 GROUP BY age ORDER BY age"
	var all []string
	rows, _ := conn.Query(ctx, query)
	for rows.Next() {
		all = append(all, string(rows.RawValues()[0]))
	}
	if rows.Err() != nil || len(all) < 5 { // every age of the declared domain, zeros included
		t.Fatalf("the query answered %v, %v", all, rows.Err())
	}
	fetch := func(sql string) ([]string, string, error) {
		res, err := conn.PgConn().Exec(ctx, sql).ReadAll()
		if err != nil {
			return nil, "", err
		}
		var got []string
		for _, r := range res[0].Rows {
			got = append(got, string(r[0]))
		}
		return got, res[0].CommandTag.String(), nil
	}
	steps := []struct {
		sql  string
		rows []string
		tag  string
		code string
	}{
		{"DECLARE c CURSOR FOR " + query, nil, "", "25P01"}, // without HOLD, outside a block
		{"BEGIN", nil, "BEGIN", ""},
		{"DECLARE c NO SCROLL CURSOR WITHOUT HOLD FOR " + query, nil, "DECLARE CURSOR", ""},
		{"DECLARE c CURSOR FOR " + query, nil, "", "42P03"},
		{"ROLLBACK", nil, "ROLLBACK", ""}, // the failed block ends, and the cursor with it
		{"FETCH c", nil, "", "34000"},
		{"BEGIN", nil, "BEGIN", ""},
		{`DECLARE "C" CURSOR FOR ` + query, nil, "DECLARE CURSOR", ""},
		{`FETCH 2 FROM "C"`, all[:2], "FETCH 2", ""},
		{`MOVE FORWARD 1 IN "C"`, nil, "MOVE 1", ""},
		{`FETCH NEXT FROM "C"`, all[3:4], "FETCH 1", ""},
		{`FETCH FORWARD ALL FROM "C"`, all[4:], fmt.Sprintf("FETCH %d", len(all)-4), ""},
		{`FETCH "C"`, nil, "FETCH 0", ""},
		{`FETCH PRIOR FROM "C"`, nil, "", "0A000"},
	}
	for _, s := range steps {
		got, tag, err := fetch(s.sql)
		var pe *pgconn.PgError
		switch {
		case s.code != "" && (!errors.As(err, &pe) || pe.Code != s.code):
			t.Errorf("%s: %v, want SQLSTATE %s", s.sql, err, s.code)
		case s.code == "" && (err != nil || tag != s.tag || !slices.Equal(got, s.rows)):
			t.Errorf("%s: %q, tag %q, %v; want %q, %q", s.sql, got, tag, err, s.rows, s.tag)
		}
	}
	conn.PgConn().Exec(ctx, "ROLLBACK").ReadAll() //nolint:errcheck // the block failed above
	// WITH HOLD outlives its transaction; CLOSE ALL drops it.
	for _, s := range []struct{ sql, tag string }{
		{"DECLARE h CURSOR WITH HOLD FOR " + query, "DECLARE CURSOR"},
		{"FETCH 1 FROM h", "FETCH 1"},
		{"CLOSE ALL", "CLOSE CURSOR"},
	} {
		if _, tag, err := fetch(s.sql); err != nil || tag != s.tag {
			t.Errorf("%s: tag %q, %v; want %q", s.sql, tag, err, s.tag)
		}
	}
	if _, _, err := fetch("FETCH 1 FROM h"); err == nil {
		t.Error("h still fetches after CLOSE ALL")
	}
}

// psycopg2CursorScript reads a query through psycopg2's named (server-side)
// cursor, two rows a round trip, as pandas' chunked reads do.
const psycopg2CursorScript = `
import sys, psycopg2
host, port, user, password, query = sys.argv[1:6]
conn = psycopg2.connect(host=host, port=port, user=user, password=password, dbname="countwall")
cur = conn.cursor(name="chunks")
cur.itersize = 2
cur.execute(query)
for row in cur:
    print(row[0], row[1])
cur.close()
conn.commit()
`

// TestPsycopg2NamedCursor: psycopg2's named cursor (DECLARE, FETCH FORWARD
// 2 until empty, CLOSE, in a transaction) gets the same rows as the query.
func TestPsycopg2NamedCursor(t *testing.T) {
	needPsycopg2(t)
	ts := startServer(t, "exact", nil, nil)
	query := "SELECT age, COUNT(*) FROM people WHERE age BETWEEN 30 AND 34 GROUP BY age ORDER BY age"
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	var want strings.Builder
	rows, _ := conn.Query(context.Background(), query)
	for rows.Next() {
		v := rows.RawValues()
		want.WriteString(string(v[0]) + " " + string(v[1]) + "\n")
	}
	host, port, _ := net.SplitHostPort(ts.addr)
	out, err := exec.Command("/usr/bin/python3", "-c", psycopg2CursorScript, host, port, testAnalyst, testPassword, query).CombinedOutput()
	if err != nil || string(out) != want.String() {
		t.Errorf("psycopg2's named cursor: %v\n%s\nwant\n%s", err, out, want.String())
	}
}
