package pgwire

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"countwall/proxy/state"
)

// TestEveryStatementReceivedIsAudited sends statements that are answered or
// refused at every stage (simple query, Parse, Bind, Execute) and checks the
// audit log has one entry for each: a refusal with its SQLSTATE under a
// keyed fingerprint, an answer with its statement and no fingerprint.
func TestEveryStatementReceivedIsAudited(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	ctx := context.Background()
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol).PgConn()
	simple := func(sql string) error {
		_, err := conn.Exec(ctx, sql).ReadAll()
		return err
	}
	extended := func(sql string, params [][]byte, oids []uint32, formats []int16) func() error {
		return func() error { return conn.ExecParams(ctx, sql, params, oids, formats, nil).Read().Err }
	}
	tests := []struct {
		name string
		sql  string
		send func() error
		want string // "" answered, else the SQLSTATE
		stmt string // the statement an answer's entry records
	}{
		{"simple answered", "SELECT COUNT(*) FROM people", nil, "", "select count(*) from people"},
		{"simple write", "DELETE FROM people", nil, "25006", ""},
		{"simple syntax", "SELEC COUNT(*) FROM people", nil, "42601", ""},
		{"parse refuses a write", "DELETE FROM people WHERE id = $1", extended("DELETE FROM people WHERE id = $1", [][]byte{[]byte("1")}, nil, nil), "25006", ""},
		{"parse refuses $0", "SELECT COUNT(*) FROM people WHERE age > $0", extended("SELECT COUNT(*) FROM people WHERE age > $0", [][]byte{[]byte("1")}, nil, nil), "*", ""},
		{"bind refuses a bad binary value", "SELECT COUNT(*) FROM people WHERE age > $1", extended("SELECT COUNT(*) FROM people WHERE age > $1", [][]byte{{1, 2, 3, 4, 5, 6, 7, 8, 9}}, []uint32{20}, []int16{1}), "22P03", ""},
		{"bind refuses a parameter count", "SELECT COUNT(*) FROM people WHERE age > $1 ", extended("SELECT COUNT(*) FROM people WHERE age > $1 ", [][]byte{[]byte("1"), []byte("2")}, nil, nil), "08P01", ""},
		{"execute refuses a bad value", "SELECT COUNT(*) FROM people WHERE age > $1  ", extended("SELECT COUNT(*) FROM people WHERE age > $1  ", [][]byte{[]byte("x")}, nil, nil), "22P02", ""},
		{"extended answered", "SELECT COUNT(*) FROM people WHERE sex = $1", extended("SELECT COUNT(*) FROM people WHERE sex = $1", [][]byte{[]byte("F")}, nil, nil), "", "select count(*) from people where sex = 'F'"},
	}
	for _, tc := range tests {
		send := tc.send
		if send == nil {
			send = func() error { return simple(tc.sql) }
		}
		err := send()
		var pe *pgconn.PgError
		switch {
		case tc.want == "" && err != nil:
			t.Fatalf("%s: %v", tc.name, err)
		case tc.want != "" && !errors.As(err, &pe):
			t.Fatalf("%s: err = %v, want a refusal", tc.name, err)
		case tc.want != "" && tc.want != "*" && pe.Code != tc.want:
			t.Fatalf("%s: SQLSTATE %s, want %s", tc.name, pe.Code, tc.want)
		}
		if pe != nil {
			tc.want = pe.Code
		}
		log, err := ts.engine.AuditLog(ctx, state.AuditFilter{Analyst: testAnalyst, Last: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 1 {
			t.Fatalf("%s: no audit entry", tc.name)
		}
		got := log[0]
		wantOutcome := state.OutcomeAnswered
		if tc.want != "" {
			wantOutcome = state.OutcomeRefused
		}
		wantFP := ts.engine.Fingerprint(tc.sql)
		if tc.want == "" {
			wantFP = "" // the statement itself is recorded
		}
		if got.Outcome != wantOutcome || got.SQLState != tc.want || got.Fingerprint != wantFP || got.Release().Statement() != tc.stmt {
			t.Errorf("%s: audit entry %+v, want outcome %s SQLSTATE %q fingerprint %q statement %q", tc.name, got, wantOutcome, tc.want, wantFP, tc.stmt)
		}
	}
	all, err := ts.engine.AuditLog(ctx, state.AuditFilter{Analyst: testAnalyst})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(tests) {
		t.Errorf("%d statements sent, %d audited", len(tests), len(all))
	}
}

// TestReloadEndsRemovedAnalystsConnections: a reload that removes the
// analyst from the config terminates her open connection with 57P01, as
// PostgreSQL does for an administrator's command, without waiting for her
// next statement.
func TestReloadEndsRemovedAnalystsConnections(t *testing.T) {
	ts := startServer(t, "laplace", nil, nil)
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	var n int64
	if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM people").Scan(&n); err != nil {
		t.Fatal(err)
	}
	err := removeAnalysts(t, ts, conn.PgConn())
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57P01" || pe.Severity != "FATAL" {
		t.Fatalf("after her removal, alice's connection got %v, want FATAL 57P01", err)
	}
	if !strings.Contains(pe.Message, "terminating connection due to administrator command") {
		t.Errorf("message %q", pe.Message)
	}
}
