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
)

// TestClientEncoding: countwall reads and writes UTF8 only, so a SET
// client_encoding is accepted for UTF8 and its spellings (SHOW then says
// UTF8, as PostgreSQL shows the canonical name) and refused for any other
// encoding, with PostgreSQL's SQLSTATE: 0A000 for one it knows (it would
// convert; countwall does not), 22023 for a name that is none.
func TestClientEncoding(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	tests := []struct {
		value, code string
	}{
		{"'UTF8'", ""}, {"'utf-8'", ""}, {"'Unicode'", ""}, {"utf8", ""}, {"DEFAULT", ""},
		{"'LATIN1'", "0A000"}, {"'win1252'", "0A000"}, {"'ISO-8859-1'", "0A000"}, {"'SQL_ASCII'", "0A000"},
		{"'EUC_JP'", "0A000"}, {"'klingon'", "22023"},
	}
	for _, tc := range tests {
		_, err := conn.Exec(ctx, "SET client_encoding = "+tc.value)
		var pgErr *pgconn.PgError
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("SET client_encoding = %s: %v", tc.value, err)
		case tc.code != "" && (!errors.As(err, &pgErr) || pgErr.Code != tc.code):
			t.Errorf("SET client_encoding = %s: %v, want SQLSTATE %s", tc.value, err, tc.code)
		case tc.code == "0A000" && !strings.Contains(pgErr.Hint, "UTF8"):
			t.Errorf("SET client_encoding = %s: hint %q does not say to use UTF8", tc.value, pgErr.Hint)
		}
		var shown string
		if err := conn.QueryRow(ctx, "SHOW client_encoding").Scan(&shown); err != nil || shown != "UTF8" {
			t.Errorf("after SET client_encoding = %s, SHOW client_encoding = %q, %v; want UTF8", tc.value, shown, err)
		}
	}
}

// TestStartupClientEncoding: the client_encoding of the startup packet is
// checked as a SET is, but for SQL_ASCII, which psql asks for by itself in
// a terminal under the C locale (and which converts nothing in PostgreSQL
// either); a refused one ends the connection with FATAL and the reason.
func TestStartupClientEncoding(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	ctx := context.Background()
	tests := []struct {
		value, code string
	}{
		{"UTF8", ""}, {"utf-8", ""}, {"UNICODE", ""}, {"SQL_ASCII", ""}, {"LATIN1", "0A000"}, {"nonsense", "22023"},
	}
	for _, tc := range tests {
		cfg, err := pgconn.ParseConfig(ts.dsn(testAnalyst, testPassword))
		if err != nil {
			t.Fatal(err)
		}
		cfg.RuntimeParams["client_encoding"] = tc.value
		conn, err := pgconn.ConnectConfig(ctx, cfg)
		if tc.code == "" {
			if err != nil {
				t.Errorf("client_encoding=%s at startup: %v", tc.value, err)
				continue
			}
			if got := conn.ParameterStatus("client_encoding"); got != "UTF8" {
				t.Errorf("client_encoding=%s at startup: announced %q, want UTF8", tc.value, got)
			}
			conn.Close(ctx)
			continue
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != tc.code || pgErr.Severity != "FATAL" {
			t.Errorf("client_encoding=%s at startup: %v, want FATAL %s", tc.value, err, tc.code)
		}
		if err == nil {
			conn.Close(ctx)
		}
	}
	// psql sends its PGCLIENTENCODING at startup and prints the reason.
	psql, err := exec.LookPath("psql")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("psql is not installed; .ci/run installs postgresql-client")
		}
		t.Skip("psql is not installed (apt-get install postgresql-client)")
	}
	host, port, _ := net.SplitHostPort(ts.addr)
	cmd := exec.Command(psql, "-X", "-h", host, "-p", port, "-U", testAnalyst, "-d", "countwall", "-c", "SELECT 1")
	cmd.Env = append(os.Environ(), "PGPASSWORD="+testPassword, "PGCONNECT_TIMEOUT=5", "PGCLIENTENCODING=LATIN1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "FATAL:  invalid value for parameter \"client_encoding\": \"LATIN1\"") ||
		!strings.Contains(string(out), "PGCLIENTENCODING=UTF8") {
		t.Errorf("psql with PGCLIENTENCODING=LATIN1: %v\n%s", err, out)
	}
}
