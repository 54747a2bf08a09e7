package proxy

import (
	"context"
	"testing"

	"countwall/config"
	"countwall/pgerror"
	"countwall/proxy/state"
)

// TestPreparedStatementExecutesLikeExec: a statement prepared once and
// executed with several arguments answers each as Exec answers the text
// with them, and every execution is audited: an answered one by its
// statement (shape and constant, no fingerprint), a refused one under the
// fingerprint computed when it was prepared.
func TestPreparedStatementExecutesLikeExec(t *testing.T) {
	const n = 200
	e := newFixture(t, n).open(t, "exact", nil)
	s := e.NewSession("alice")
	defer s.Close()
	ctx := context.Background()
	const sql = "SELECT COUNT(*) FROM people WHERE age = $1"
	st := s.Prepare(sql)
	if st.Fingerprint() != e.Fingerprint(sql) || st.Transaction != TxNone {
		t.Fatalf("prepared: fingerprint %q transaction %v, want %q and none", st.Fingerprint(), st.Transaction, e.Fingerprint(sql))
	}
	for _, age := range []string{"20", "31", "20", "x"} {
		got, err := s.Execute(ctx, st, []*string{&age})
		want, wantErr := s.Exec(ctx, sql, []*string{&age})
		if pgerror.SQLState(err) != pgerror.SQLState(wantErr) {
			t.Fatalf("age %s: prepared %v, Exec %v", age, err, wantErr)
		}
		if err == nil && got.Rows[0][0].Int != want.Rows[0][0].Int {
			t.Fatalf("age %s: prepared %d, Exec %d", age, got.Rows[0][0].Int, want.Rows[0][0].Int)
		}
	}
	log, err := e.AuditLog(ctx, state.AuditFilter{Analyst: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 8 {
		t.Fatalf("%d audit rows for 8 executions", len(log))
	}
	wantStatements := []string{"select count(*) from people where age = 20", "select count(*) from people where age = 31"}
	var answered, refused int
	for _, row := range log {
		switch row.Outcome {
		case state.OutcomeAnswered:
			got := row.Release().Statement()
			if row.Fingerprint != "" || (got != wantStatements[0] && got != wantStatements[1]) {
				t.Errorf("answered row: fingerprint %q statement %q, want none and one of %q", row.Fingerprint, got, wantStatements)
			}
			answered++
		default:
			if row.Fingerprint != st.Fingerprint() || row.Shape != "" {
				t.Errorf("refused row: fingerprint %q shape %q, want %q and none", row.Fingerprint, row.Shape, st.Fingerprint())
			}
			refused++
		}
	}
	if answered != 6 || refused != 2 {
		t.Errorf("%d answered and %d refused rows, want 6 and 2", answered, refused)
	}
}

// TestPreparedStatementFollowsReload: a statement prepared before a reload
// is held to the policy in force when it runs, not the one it was prepared
// under.
func TestPreparedStatementFollowsReload(t *testing.T) {
	f := newFixture(t, 50)
	cfg := f.config(t, "exact", nil)
	e, err := Open(context.Background(), cfg, Options{NoiseSeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := e.NewSession("alice")
	defer s.Close()
	ctx := context.Background()
	st := s.Prepare("SELECT COUNT(*) FROM people WHERE income > $1")
	arg := "10"
	if _, err := s.Execute(ctx, st, []*string{&arg}); err != nil {
		t.Fatalf("before the reload: %v", err)
	}
	narrower := *cfg
	narrower.Tables = map[string]config.Table{}
	for name, tc := range cfg.Tables {
		tc.Columns = []string{"age", "sex"}
		narrower.Tables[name] = tc
	}
	if err := e.Reload(ctx, &narrower); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Execute(ctx, st, []*string{&arg}); pgerror.SQLState(err) != pgerror.UndefinedColumn {
		t.Fatalf("after a reload that makes income unqueryable: %v, want %s", err, pgerror.UndefinedColumn)
	}
}

// TestTransactionControlIsTyped: what a statement does to a transaction
// block is known when it is prepared, before it runs.
func TestTransactionControlIsTyped(t *testing.T) {
	e := newFixture(t, 10).open(t, "exact", nil)
	s := e.NewSession("alice")
	defer s.Close()
	for sql, want := range map[string]TxOp{
		"BEGIN": TxBegin, "START TRANSACTION": TxBegin, "COMMIT": TxCommit, "END": TxCommit,
		"ROLLBACK": TxRollback, "ABORT": TxRollback, "SELECT COUNT(*) FROM people": TxNone, "COMMITT": TxNone,
	} {
		if got := s.Prepare(sql).Transaction; got != want {
			t.Errorf("%q: %v, want %v", sql, got, want)
		}
	}
}
