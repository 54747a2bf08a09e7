package pgwire

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"countwall/proxy/state"
)

// dpSpent is the dp epsilon alice has spent, as SHOW budget reports it.
func dpSpent(t *testing.T, ts *testServer) float64 {
	t.Helper()
	res, err := ts.engine.Query(context.Background(), testAnalyst, "SHOW budget")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if r[0].Text == "dp" {
			return r[1].Float
		}
	}
	t.Fatal("no dp row in SHOW budget")
	return 0
}

// TestExplainAndIntervalsThroughPgx: over the simple protocol and both
// extended ones, EXPLAIN (with a bound parameter) answers one text column
// named QUERY PLAN and charges nothing; EXPLAIN of a refused statement is
// refused with its SQLSTATE; with SET countwall.confidence the answer's
// RowDescription names ci_low and ci_high (float8) and each interval holds
// its answer.
func TestExplainAndIntervalsThroughPgx(t *testing.T) {
	ts := startServer(t, "laplace", nil, nil)
	ctx := context.Background()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			conn := ts.connect(t, m.mode)
			before := dpSpent(t, ts)
			rows, err := conn.Query(ctx, "EXPLAIN SELECT COUNT(*) FROM people WHERE age > $1", 30)
			if err != nil {
				t.Fatal(err)
			}
			var plan []string
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, line)
			}
			fields := rows.FieldDescriptions()
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if len(fields) != 1 || fields[0].Name != "QUERY PLAN" || len(plan) < 5 || plan[0] != "Count on people under laplace" {
				t.Fatalf("fields %v, plan %q", fields, plan)
			}
			if !strings.Contains(strings.Join(plan, "\n"), "Expected error: 95% of counts within [-30, 30] of the truth") {
				t.Errorf("plan lacks the expected error at epsilon 0.1:\n%s", strings.Join(plan, "\n"))
			}
			_, err = conn.Exec(ctx, "EXPLAIN SELECT * FROM people")
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "0A000" {
				t.Fatalf("EXPLAIN SELECT *: %v, want 0A000", err)
			}
			if after := dpSpent(t, ts); after != before {
				t.Fatalf("EXPLAIN charged: dp epsilon %g, then %g", before, after)
			}

			if _, err := conn.Exec(ctx, "SET countwall.confidence = 0.95"); err != nil {
				t.Fatal(err)
			}
			defer conn.Exec(ctx, "SET countwall.confidence = off") //nolint:errcheck // the connection ends with the test
			rows, err = conn.Query(ctx, "SELECT sex, COUNT(*) FROM people WHERE age > $1 GROUP BY sex", 30)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for rows.Next() {
				var sex string
				var count int64
				var lo, hi float64
				if err := rows.Scan(&sex, &count, &lo, &hi); err != nil {
					t.Fatal(err)
				}
				if !(lo <= float64(count) && float64(count) <= hi && hi-lo > 10) {
					t.Errorf("%s: %d in [%g, %g]", sex, count, lo, hi)
				}
				n++
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			names := []string{}
			for _, f := range rows.FieldDescriptions() {
				names = append(names, f.Name)
			}
			if n != 2 || strings.Join(names, ",") != "sex,count,ci_low,ci_high" {
				t.Fatalf("%d rows, columns %v", n, names)
			}
		})
	}
}

// TestExplainAndIntervalsThroughPsql: psql shows EXPLAIN as it shows a
// PostgreSQL plan, refuses EXPLAIN of a refused statement with its message,
// and shows the interval columns.
func TestExplainAndIntervalsThroughPsql(t *testing.T) {
	ts := startServer(t, "laplace", nil, nil)
	out := psqlScript(t, ts, `EXPLAIN SELECT sex, COUNT(*) FROM people GROUP BY sex;
EXPLAIN SELECT * FROM people;
SET countwall.confidence = 0.95;
SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY sex;
`)
	for _, want := range []string{
		"QUERY PLAN ",
		" Count on people under laplace\n",
		"   Charge: dp epsilon 0.1 at the session's share (epsilon 0.1, delta 1e-06)\n",
		"   Budget after: dp epsilon 0.1 of 0.5 spent (0.4 left)",
		"ERROR:  SELECT * is not supported",
		" sex | count | ci_low | ci_high \n",
		" F   |",
		"(2 rows)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("psql output lacks %q:\n%s", want, out)
		}
	}
}

// psqlScript runs a script through the real psql, statement by statement,
// and returns what it printed. psql is required in CI (.ci/run installs it).
func psqlScript(t *testing.T, ts *testServer, script string) string {
	t.Helper()
	psql, err := exec.LookPath("psql")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("psql is not installed; .ci/run installs postgresql-client")
		}
		t.Skip("psql is not installed (apt-get install postgresql-client)")
	}
	host, port, _ := net.SplitHostPort(ts.addr)
	cmd := exec.Command(psql, "-X", "-h", host, "-p", port, "-U", testAnalyst, "-d", "countwall", "-f", "-")
	cmd.Env = append(os.Environ(), "PGPASSWORD="+testPassword, "PGCONNECT_TIMEOUT=5")
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	return string(out)
}

// needPsycopg2 skips the test where /usr/bin/python3 has no psycopg2
// (Debian's python3-psycopg2), except in CI, which installs it.
func needPsycopg2(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import psycopg2").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("psycopg2 is missing in CI: .ci/run installs python3-psycopg2")
		}
		t.Skip("psycopg2 is not installed (apt-get install python3-psycopg2)")
	}
}

// psycopg2ExplainScript prints EXPLAIN's column and first line, the SQLSTATE
// of a refused EXPLAIN, then the columns of an answer with intervals and
// whether each interval holds its answer.
const psycopg2ExplainScript = `
import sys, psycopg2
host, port, user, password = sys.argv[1:5]
conn = psycopg2.connect(host=host, port=port, user=user, password=password, dbname="countwall")
conn.autocommit = True
cur = conn.cursor()
cur.execute("EXPLAIN SELECT COUNT(*) FROM people WHERE age > %s", (30,))
print("explain:", cur.description[0].name, "|", cur.fetchall()[0][0])
try:
    cur.execute("EXPLAIN SELECT COUNT(*) FROM people WHERE id = %s", (3,))
    print("refused: no")
except psycopg2.Error as e:
    print("refused:", e.pgcode)
cur.execute("SET countwall.confidence = 0.9")
cur.execute("SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY sex")
print("columns:", ",".join(d.name for d in cur.description))
for sex, count, lo, hi in cur.fetchall():
    print("inside:", sex, lo <= count <= hi)
`

// TestExplainAndIntervalsThroughPsycopg2: the same through psycopg2, which
// pastes its parameters into the text.
func TestExplainAndIntervalsThroughPsycopg2(t *testing.T) {
	needPsycopg2(t)
	ts := startServer(t, "gaussian", nil, nil)
	host, port, _ := net.SplitHostPort(ts.addr)
	before := dpSpent(t, ts)
	out, err := exec.Command("/usr/bin/python3", "-c", psycopg2ExplainScript, host, port, testAnalyst, testPassword).CombinedOutput()
	if err != nil {
		t.Fatalf("psycopg2: %v\n%s", err, out)
	}
	want := strings.Join([]string{
		"explain: QUERY PLAN | Count on people under gaussian",
		"refused: 42501",
		"columns: sex,count,ci_low,ci_high",
		"inside: F True",
		"inside: M True",
	}, "\n") + "\n"
	if string(out) != want {
		t.Fatalf("psycopg2 printed\n%s\nwant\n%s", out, want)
	}
	if after := dpSpent(t, ts); after <= before {
		t.Fatalf("the answered query was not charged: %g, then %g", before, after)
	}
}

// cachedBeforeConfidence is a server under mechanism and a pgx connection
// that cached sql (one bound parameter) before SET countwall.confidence.
func cachedBeforeConfidence(t *testing.T, mechanism string) (*testServer, *pgx.Conn, string) {
	t.Helper()
	ts := startServer(t, mechanism, nil, nil)
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	ctx := context.Background()
	const sql = "SELECT COUNT(*) FROM people WHERE age > $1"
	var count int64
	if err := conn.QueryRow(ctx, sql, 30).Scan(&count); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SET countwall.confidence = 0.95"); err != nil {
		t.Fatal(err)
	}
	return ts, conn, sql
}

// TestConfidenceSetAfterAStatementWasPrepared: a statement pgx prepared and
// cached before SET countwall.confidence is refused as PostgreSQL refuses
// a cached plan whose columns changed (0A000), pgx drops it from its cache,
// and the next call is prepared again with the interval columns.
func TestConfidenceSetAfterAStatementWasPrepared(t *testing.T) {
	_, conn, sql := cachedBeforeConfidence(t, "exact")
	ctx := context.Background()
	var count int64
	var pe *pgconn.PgError
	if err := conn.QueryRow(ctx, sql, 30).Scan(&count); !errors.As(err, &pe) || pe.Code != "0A000" || pe.Message != "cached plan must not change result type" {
		t.Fatalf("the cached statement after SET: %v, want 0A000", err)
	}
	var lo, hi float64
	if err := conn.QueryRow(ctx, sql, 30).Scan(&count, &lo, &hi); err != nil || lo != float64(count) || hi != float64(count) {
		t.Fatalf("prepared again: %d [%g, %g], %v", count, lo, hi, err)
	}
}

// TestCachedPlanRefusedBeforeTheRead: the refusal of a statement prepared
// before SET countwall.confidence comes before the data is read: nothing is
// charged and the audit records a refusal, not an answer the client never
// received (the risk monitor decides on the audit's answers, which must be
// what left the firewall).
func TestCachedPlanRefusedBeforeTheRead(t *testing.T) {
	ts, conn, sql := cachedBeforeConfidence(t, "laplace")
	ctx := context.Background()
	var count int64
	before := dpSpent(t, ts)
	var pe *pgconn.PgError
	if err := conn.QueryRow(ctx, sql, 30).Scan(&count); !errors.As(err, &pe) || pe.Code != "0A000" {
		t.Fatalf("the cached statement after SET: %v, want 0A000", err)
	}
	log, err := ts.engine.AuditLog(ctx, state.AuditFilter{Analyst: testAnalyst, Last: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 1 || log[0].Outcome != state.OutcomeRefused || log[0].SQLState != "0A000" || len(log[0].Cells) != 0 {
		t.Errorf("audit of the refused statement: %+v", log)
	}
	if after := dpSpent(t, ts); after != before {
		t.Errorf("the refused statement was charged: %g, then %g", before, after)
	}
}
