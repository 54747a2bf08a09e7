package state

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFingerprintIsKeyed: the fingerprint is an HMAC with the firewall
// secret, not a hash anyone can compute from a guessed statement.
func TestFingerprintIsKeyed(t *testing.T) {
	const q = "SELECT COUNT(*) FROM people WHERE age = 42"
	unkeyed := sha256.Sum256([]byte(q))
	a, b := []byte("secret a"), []byte("secret b")
	tests := []struct {
		name string
		got  string
		not  string
	}{
		{"not the unkeyed SHA-256 prefix", Fingerprint(a, q), hex.EncodeToString(unkeyed[:8])},
		{"another secret gives another fingerprint", Fingerprint(a, q), Fingerprint(b, q)},
		{"another statement gives another fingerprint", Fingerprint(a, q), Fingerprint(a, q+" ")},
	}
	for _, tc := range tests {
		if tc.got == tc.not || len(tc.got) != 16 {
			t.Errorf("%s: %s vs %s", tc.name, tc.got, tc.not)
		}
	}
	if Fingerprint(a, q) != Fingerprint(a, q) {
		t.Error("the fingerprint is not stable")
	}
	// The exact value: HMAC-SHA256 keyed with the secret over a fixed
	// prefix and the statement, its first 8 bytes in hex.
	mac := hmac.New(sha256.New, a)
	mac.Write([]byte("countwall statement fingerprint\x00" + q))
	if want := hex.EncodeToString(mac.Sum(nil)[:8]); Fingerprint(a, q) != want {
		t.Errorf("fingerprint %s, want %s", Fingerprint(a, q), want)
	}
	// A state database reuses its keyed HMACs: statement after statement,
	// each fingerprint is the one computed afresh.
	db := &DB{secret: a}
	for _, sql := range []string{q, q + " ", "", q, strings.Repeat("x", 200)} {
		if got, want := db.Fingerprint(sql), Fingerprint(a, sql); got != want {
			t.Errorf("%q: reused HMAC gave %s, want %s", sql, got, want)
		}
	}
}

// TestAuditDurableIsCommittedOnReturn: once AuditDurable returns, another
// connection to the file sees the row (it is committed, not queued).
func TestAuditDurableIsCommittedOnReturn(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for i := 1; i <= 5; i++ {
		if err := db.AuditDurable(ctx, AuditEntry{Analyst: "alice", Outcome: OutcomeAnswered, Kind: "query"}); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := other.QueryRow(`SELECT count(*) FROM audit_log`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != i {
			t.Fatalf("after %d durable entries another connection sees %d", i, n)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.AuditDurable(ctx, AuditEntry{Analyst: "alice"}); err != ErrClosed {
		t.Errorf("AuditDurable after Close: %v, want ErrClosed", err)
	}
}

func TestListAuditFiltersAndPrints(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, newStatePath(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	entries := []AuditEntry{
		{At: t0, Analyst: "alice", Fingerprint: "f1", Kind: "query", Mechanism: "laplace", Outcome: OutcomeAnswered, ChargeKind: "dp", Epsilon: 0.1},
		{At: t0.Add(time.Minute), Analyst: "bob", Fingerprint: "f2", Kind: "invalid", Mechanism: "laplace", Outcome: OutcomeRefused, SQLState: "25006", Reason: "writes"},
		{At: t0.Add(2 * time.Minute), Analyst: "alice", Fingerprint: "f3", Kind: "query", Mechanism: "gaussian", Outcome: OutcomeAnswered, ChargeKind: "dp", Epsilon: 0.2, Delta: 1e-6},
		{At: t0.Add(2*time.Minute + 500*time.Millisecond), Analyst: "alice", Fingerprint: "f4", Kind: "show", Mechanism: "gaussian", Outcome: OutcomeAnswered},
		{At: t0.Add(3 * time.Minute), Analyst: "alice", Fingerprint: "f5", Kind: "query", Mechanism: "gaussian", Outcome: OutcomeAnswered, ChargeKind: "dp", Rho: 0.00038},
	}
	for _, e := range entries {
		db.Audit(e)
	}
	db.Flush()
	tests := []struct {
		name   string
		filter AuditFilter
		want   []string // fingerprints
	}{
		{"all", AuditFilter{}, []string{"f1", "f2", "f3", "f4", "f5"}},
		{"analyst", AuditFilter{Analyst: "alice"}, []string{"f1", "f3", "f4", "f5"}},
		{"since", AuditFilter{Since: t0.Add(time.Minute)}, []string{"f2", "f3", "f4", "f5"}},
		{"since with a fraction", AuditFilter{Since: t0.Add(2*time.Minute + time.Millisecond)}, []string{"f4", "f5"}},
		{"analyst and since", AuditFilter{Analyst: "alice", Since: t0.Add(30 * time.Second)}, []string{"f3", "f4", "f5"}},
		{"last", AuditFilter{Last: 2}, []string{"f4", "f5"}},
		{"nobody", AuditFilter{Analyst: "carol"}, nil},
	}
	for _, tc := range tests {
		got, err := db.ListAudit(ctx, tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		var fps []string
		for _, e := range got {
			fps = append(fps, e.Fingerprint)
		}
		if strings.Join(fps, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: got %v, want %v", tc.name, fps, tc.want)
		}
	}
	all, err := db.ListAudit(ctx, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteAuditTable(&out, all); err != nil {
		t.Fatal(err)
	}
	want := `time                      analyst  outcome        fingerprint  mechanism  charge
2026-11-23T10:00:00.000Z  alice    answered       f1           laplace    dp epsilon 0.1
2026-11-23T10:01:00.000Z  bob      refused 25006  f2           laplace    -
2026-11-23T10:02:00.000Z  alice    answered       f3           gaussian   dp epsilon 0.2 delta 1e-06
2026-11-23T10:02:00.500Z  alice    answered       f4           gaussian   -
2026-11-23T10:03:00.000Z  alice    answered       f5           gaussian   dp epsilon 0 rho 0.00038
`
	if out.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{"", time.Time{}, false},
		{"1h", now.Add(-time.Hour), false},
		{"90m", now.Add(-90 * time.Minute), false},
		{"2026-11-23T10:00:00Z", time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), false},
		{"2026-11-23T10:00:00+10:00", time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), false},
		{"yesterday", time.Time{}, true},
		{"-1h", time.Time{}, true},
		{"2026-11-23", time.Time{}, true},
	}
	for _, tc := range tests {
		got, err := ParseSince(tc.in, now)
		if (err != nil) != tc.wantErr || !got.Equal(tc.want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

// writeOldAuditTable writes a state database as it was before the charge
// columns, its audit table holding a row for each analyst given, in order.
func writeOldAuditTable(t *testing.T, analysts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	old, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if _, err := old.Exec(`CREATE TABLE audit (id INTEGER PRIMARY KEY, at TEXT NOT NULL, analyst TEXT NOT NULL, fingerprint TEXT NOT NULL,
	kind TEXT NOT NULL, mechanism TEXT NOT NULL, outcome TEXT NOT NULL, sqlstate TEXT NOT NULL, reason TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, a := range analysts {
		if _, err := old.Exec(`INSERT INTO audit (at, analyst, fingerprint, kind, mechanism, outcome, sqlstate, reason)
		VALUES ('2026-01-01T00:00:00Z', ?, 'f0', 'query', 'exact', 'answered', '', '')`, a); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestOldAuditTableGainsChargeColumns: a state database written before the
// charge columns existed opens, keeps its rows and takes new ones.
func TestOldAuditTableGainsChargeColumns(t *testing.T) {
	ctx := context.Background()
	path := writeOldAuditTable(t, "old")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.AuditDurable(ctx, AuditEntry{Analyst: "new", Outcome: OutcomeAnswered, ChargeKind: "dp", Epsilon: 0.5}); err != nil {
		t.Fatal(err)
	}
	got, err := db.ListAudit(ctx, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Analyst != "old" || got[0].ChargeKind != "" || got[1].Epsilon != 0.5 {
		t.Errorf("after migration: %+v", got)
	}
}

// TestOldAuditTableMovesEveryRow: an old table of more rows than one
// multi-row INSERT holds moves whole, in its order.
func TestOldAuditTableMovesEveryRow(t *testing.T) {
	ctx := context.Background()
	n := 2*auditRowsPerInsert + 3
	analysts := make([]string, n)
	for i := range analysts {
		analysts[i] = fmt.Sprint("old-", i)
	}
	path := writeOldAuditTable(t, analysts...)
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.ListAudit(ctx, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d rows after the move, want %d", len(got), n)
	}
	for i, e := range got {
		if want := fmt.Sprint("old-", i); e.Analyst != want {
			t.Errorf("row %d: analyst %q, want %q", i, e.Analyst, want)
		}
	}
}

// A state database written before the audit kept rho gains the column when
// it is opened, keeps its rows, and records a zCDP charge's rho from then on.
func TestAuditGainsTheRhoColumn(t *testing.T) {
	ctx := context.Background()
	path := newStatePath(t)
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Audit(AuditEntry{Analyst: "alice", Fingerprint: "before", Kind: "query", Mechanism: "laplace", Outcome: OutcomeAnswered, ChargeKind: "dp", Epsilon: 0.1})
	db.Flush()
	if _, err := db.SQL().ExecContext(ctx, `ALTER TABLE audit_context DROP COLUMN rho`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatalf("reopening a state without the rho column: %v", err)
	}
	defer db.Close()
	db.Audit(AuditEntry{Analyst: "alice", Fingerprint: "after", Kind: "query", Mechanism: "gaussian", Outcome: OutcomeAnswered, ChargeKind: "dp", Rho: 0.25})
	db.Flush()
	got, err := db.ListAudit(ctx, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Fingerprint != "before" || got[0].Epsilon != 0.1 || got[0].Rho != 0 || got[1].Fingerprint != "after" || got[1].Rho != 0.25 {
		t.Errorf("audit after the migration: %+v", got)
	}
}
