package state

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

func TestSecretIsPrivateAndStable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	// A pre-existing file with loose permissions is tightened.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := append([]byte(nil), db.Secret()...)
	if len(first) != SecretBytes || bytes.Equal(first, make([]byte, SecretBytes)) {
		t.Fatalf("secret = %x", first)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("state database permissions = %o, want 600", perm)
	}
	db, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !bytes.Equal(db.Secret(), first) {
		t.Error("secret changed across a restart")
	}
	other, err := Open(ctx, filepath.Join(t.TempDir(), "other.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if bytes.Equal(other.Secret(), first) {
		t.Error("two state databases drew the same secret")
	}
}

func TestAuditLogIsWrittenInOrderAndFlushedOnClose(t *testing.T) {
	ctx := context.Background()
	path := newStatePath(t)
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000 // several batches
	for i := 0; i < n; i++ {
		outcome := OutcomeAnswered
		if i%2 == 1 {
			outcome = OutcomeRefused
		}
		db.Audit(AuditEntry{Analyst: "alice", Fingerprint: "f", Kind: "query", Mechanism: "exact", Outcome: outcome})
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	log, err := db.AuditLog(ctx, 2*n)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != n {
		t.Fatalf("audit log has %d entries after close, want %d", len(log), n)
	}
	if log[0].Outcome != "answered" || log[n-1].Outcome != "refused" || log[0].At.IsZero() {
		t.Errorf("audit order or time wrong: first %+v last %+v", log[0], log[n-1])
	}
}

func TestParseAuditSync(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want AuditSync
		ok   bool
	}{
		{"", AuditSyncFull, true},
		{"full", AuditSyncFull, true},
		{"NORMAL", AuditSyncNormal, true},
		{"off", "", false},
		{"extra", "", false},
	} {
		got, err := ParseAuditSync(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseAuditSync(%q) = %q, %v", tc.in, got, err)
		}
	}
	if _, err := Open(context.Background(), newStatePath(t), Options{AuditSync: "off"}); err == nil {
		t.Error("Open accepted audit sync \"off\"")
	}
}

// With audit.sync normal only the audit writer's connection runs
// synchronous=NORMAL: the handle the ledger charges through stays FULL, and
// the rows written in normal mode are there after a reopen.
func TestAuditSyncNormalLeavesTheLedgerFull(t *testing.T) {
	ctx := context.Background()
	path := newStatePath(t)
	db, err := Open(ctx, path, Options{AuditSync: AuditSyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	synchronous := func(h interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) int {
		var n int
		if err := h.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := synchronous(db.SQL()); got != 2 {
		t.Errorf("ledger handle synchronous = %d, want 2 (FULL)", got)
	}
	if got := synchronous(db.auditConn.conn); got != 1 { // the writer holds the handle's one connection
		t.Errorf("audit handle synchronous = %d, want 1 (NORMAL)", got)
	}
	answeredAfterReopen(t, db, path, 3)
}

// answeredAfterReopen writes n answers' entries through db, closes it, and
// checks that a new handle on path reads all of them.
func answeredAfterReopen(t *testing.T, db *DB, path string, n int) {
	t.Helper()
	ctx := context.Background()
	for range n {
		if err := db.AuditDurable(ctx, AuditEntry{Analyst: "alice", Fingerprint: "f", Kind: "query", Mechanism: "exact", Outcome: OutcomeAnswered}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if log, err := db.AuditLog(ctx, 2*n); err != nil || len(log) != n {
		t.Errorf("audit log after reopening: %d entries, %v; want %d", len(log), err, n)
	}
}
