package pgwire

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPsycopg3Client runs testdata/clients/psycopg3.py: psycopg 3 with its
// defaults (a transaction per block of work, statements prepared after 5
// executions and at most 100 kept, then DEALLOCATE; DEALLOCATE ALL at a
// rollback), prepare=True, binary parameters and results, pipeline mode, a
// server-side cursor read in chunks, type introspection in a transaction,
// COPY of a GROUP BY out and a refused statement. Every answer must be the
// one the simple protocol gives. It needs Debian's python3-psycopg, which
// .ci/run installs; without it the test is skipped, but not in CI.
func TestPsycopg3Client(t *testing.T) {
	needPsycopg3(t)
	// A server that keeps one statement more than psycopg 3 does: the
	// driver's DEALLOCATE of its oldest is what lets it go on.
	ts := startServer(t, "exact", nil, func(o *Options) { o.MaxPreparedStatements = 101 })
	host, port, _ := net.SplitHostPort(ts.addr)
	cmd := exec.Command("/usr/bin/python3", "testdata/clients/psycopg3.py", host, port, testAnalyst, testPassword)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psycopg 3: %v\n%s", err, out)
	}
	want := psycopg3Answers(t, ts)
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i := range max(len(got), len(want)) {
		g, w := lineAt(got, i), lineAt(want, i)
		if g != w {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, g, w)
		}
	}
}

func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(nothing)"
}

// psycopg3Answers are the lines the script must print, from the same
// queries over the simple protocol.
func psycopg3Answers(t *testing.T, ts *testServer) []string {
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	count := func(where string) string {
		var n int64
		if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM people WHERE "+where).Scan(&n); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		return strconv.FormatInt(n, 10)
	}
	// groups is the script's groups(): the rows, then the ages counted.
	groups := func(from, to int) string {
		rows, err := conn.Query(ctx, fmt.Sprintf("SELECT age, COUNT(*) FROM people WHERE age BETWEEN %d AND %d GROUP BY age ORDER BY age", from, to))
		if err != nil {
			t.Fatal(err)
		}
		n, counted := 0, []string{}
		for rows.Next() {
			var age string
			var c int64
			if err := rows.Scan(&age, &c); err != nil {
				t.Fatal(err)
			}
			if n++; c != 0 {
				counted = append(counted, fmt.Sprintf("%s=%d", age, c))
			}
		}
		return fmt.Sprintf("%d rows; %s", n, strings.Join(counted, " "))
	}
	f, m := count("sex = 'F'"), count("sex = 'M'")
	older := count("age > 30 AND sex = 'F'")
	return []string{
		"defaults: " + older,
		"float and text: " + count("age > 30.5 AND sex = 'F'"),
		"720 executions: [" + older + "]",
		"after rollback: " + older,
		"type info: ('int8', 20, 1016)",
		"prepare=True: " + older,
		"binary: " + older,
		"binary groups: " + groups(30, 32),
		"pipeline: " + older + " " + count("age > 30 AND sex = 'M'") + " " + groups(30, 32),
		"server-side cursor binary=False: 4 then " + groups(30, 39),
		"server-side cursor binary=True: 4 then " + groups(30, 39),
		fmt.Sprintf("copy rows: [('F', '%s'), ('M', '%s')]", f, m),
		fmt.Sprintf("copy csv: sex,count|F,%s|M,%s|", f, m),
		"refused: ReadOnlySqlTransaction 25006 DELETE is not allowed: countwall answers COUNT queries only and never writes",
		"after refusal: " + older,
	}
}

// needPsycopg3 skips the test where /usr/bin/python3 has no psycopg 3
// (Debian's python3-psycopg), except in CI, which installs it.
func needPsycopg3(t *testing.T) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import psycopg").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("psycopg 3 is missing in CI: .ci/run installs python3-psycopg")
		}
		t.Skipf("psycopg 3 cannot be imported (apt-get install python3-psycopg): %v", err)
	}
}
