package pgwire

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"countwall/internal/pgtest"
)

// setRollbackCases are Query messages, sent in turn on a fresh connection
// whose application_name is 'before'; what SHOW application_name says
// afterwards must be what PostgreSQL 15 says. A SET is undone with the
// transaction it was made in: the implicit one of a Query message of
// several statements when one fails, a block rolled back (or failed and
// committed), a savepoint rolled back to.
var setRollbackCases = []struct {
	name     string
	messages []string
}{
	{"failing batch", []string{"SET application_name = 'x'; SELECT COUNT(*) FROM nowhere"}},
	{"batch", []string{"SET application_name = 'x'; SELECT 1"}},
	{"batch, failing after a commit", []string{"SET application_name = 'x'; COMMIT; SELECT COUNT(*) FROM nowhere"}},
	{"batch, failing after a rollback", []string{"SET application_name = 'x'; ROLLBACK; SET application_name = 'y'; SELECT COUNT(*) FROM nowhere"}},
	{"block rolled back", []string{"BEGIN; SET application_name = 'x'; ROLLBACK"}},
	{"block committed", []string{"BEGIN; SET application_name = 'x'; COMMIT"}},
	{"block failing, rolled back", []string{"BEGIN; SET application_name = 'x'; SELECT COUNT(*) FROM nowhere", "ROLLBACK"}},
	{"block failing, committed", []string{"BEGIN", "SET application_name = 'x'", "SELECT COUNT(*) FROM nowhere", "COMMIT"}},
	{"block over messages", []string{"BEGIN", "SET application_name = 'x'", "ROLLBACK"}},
	{"batch opening a block", []string{"SET application_name = 'x'; BEGIN; SET application_name = 'y'", "ROLLBACK"}},
	{"savepoint", []string{"BEGIN", "SET application_name = 'x'", "SAVEPOINT s", "SET application_name = 'y'", "ROLLBACK TO SAVEPOINT s", "COMMIT"}},
	{"savepoint released", []string{"BEGIN", "SAVEPOINT s", "SET application_name = 'y'", "RELEASE SAVEPOINT s", "ROLLBACK"}},
	{"failing SET alone", []string{"SET application_name = 'x'", "SET nosuch = 1"}},
	{"SET LOCAL outside a block", []string{"SET LOCAL application_name = 'x'"}},
	{"SET LOCAL in a block committed", []string{"BEGIN", "SET LOCAL application_name = 'x'", "COMMIT"}},
	{"SET LOCAL seen inside its block", []string{"BEGIN", "SET LOCAL application_name = 'x'", "SET application_name = 'y'; SET LOCAL application_name = 'z'"}},
	{"SET then SET LOCAL, committed", []string{"BEGIN", "SET application_name = 'x'", "SET LOCAL application_name = 'y'", "COMMIT"}},
	{"SET LOCAL in a batch", []string{"SET LOCAL application_name = 'x'; SELECT 1"}},
	{"SET LOCAL in a batch, shown inside", []string{"SET LOCAL application_name = 'x'; SHOW application_name"}},
	{"SET and SET LOCAL in a failing batch", []string{"SET application_name = 'x'; SET LOCAL application_name = 'y'; SELECT COUNT(*) FROM nowhere"}},
	{"SET LOCAL in a failed block, committed", []string{"BEGIN", "SET application_name = 'x'", "SET LOCAL application_name = 'y'", "SELECT COUNT(*) FROM nowhere", "COMMIT"}},
}

func TestPostgresSetRollbackDifferential(t *testing.T) {
	srv := pgtest.Server(t)
	ts := startServer(t, "exact", nil, nil)
	ctx := context.Background()
	after := func(t *testing.T, url string, messages []string) string {
		conn, err := pgconn.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "SET application_name = 'before'").ReadAll(); err != nil {
			t.Fatal(err)
		}
		for _, m := range messages {
			conn.Exec(ctx, m).ReadAll() //nolint:errcheck // some fail on purpose; both servers alike
		}
		res, err := conn.Exec(ctx, "SHOW application_name").ReadAll()
		if err != nil || len(res) != 1 || len(res[0].Rows) != 1 {
			t.Fatalf("SHOW application_name: %v", err)
		}
		return string(res[0].Rows[0][0])
	}
	for _, tc := range setRollbackCases {
		t.Run(tc.name, func(t *testing.T) {
			got := after(t, ts.dsn(testAnalyst, testPassword), tc.messages)
			want := after(t, srv.URL("postgres"), tc.messages)
			if got != want {
				t.Errorf("%q: application_name %q, PostgreSQL 15 %q", tc.messages, got, want)
			}
		})
	}
}

// TestSetLocalShare: SET LOCAL epsilon lasts until its block ends, and
// outside a block changes nothing, as PostgreSQL treats SET LOCAL.
func TestSetLocalShare(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, ts.dsn(testAnalyst, testPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, tc := range []struct{ message, want string }{
		{"SET LOCAL epsilon = 0.5; SHOW epsilon", "0.5"}, // one implicit transaction
		{"SHOW epsilon", "0.1"},
		{"SET LOCAL epsilon = 0.5", ""}, // outside a block: a warning, nothing set
		{"SHOW epsilon", "0.1"},
		{"BEGIN; SET epsilon = 0.3; SET LOCAL epsilon = 0.5; SHOW epsilon", "0.5"},
		{"COMMIT; SHOW epsilon", "0.3"},
	} {
		res, err := conn.Exec(ctx, tc.message).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", tc.message, err)
		}
		if tc.want == "" {
			continue
		}
		if got := string(res[len(res)-1].Rows[0][0]); got != tc.want {
			t.Errorf("%s: epsilon %s, want %s", tc.message, got, tc.want)
		}
	}
}

// TestSetRollbackRestoresShare: countwall's own settings are undone with
// the transaction as well, the share a query spends among them.
func TestSetRollbackRestoresShare(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, ts.dsn(testAnalyst, testPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, m := range []string{"SET epsilon = 0.2; SET countwall.confidence = 0.9; SELECT COUNT(*) FROM nowhere",
		"BEGIN; SET epsilon = 0.3; ROLLBACK"} {
		conn.Exec(ctx, m).ReadAll() //nolint:errcheck // fails on purpose
		res, err := conn.Exec(ctx, "SHOW epsilon; SHOW countwall.confidence").ReadAll()
		if err != nil || len(res) != 2 {
			t.Fatalf("SHOW: %v", err)
		}
		if eps, conf := string(res[0].Rows[0][0]), string(res[1].Rows[0][0]); eps != "0.1" || conf != "off" {
			t.Errorf("after %q: epsilon %s, confidence %s; want the defaults 0.1 and off", m, eps, conf)
		}
	}
}
