package state

import (
	"bytes"
	"context"
	"database/sql"
	"strings"
	"testing"

	"countwall/proxy/state/release"
)

// openAuditDB opens a fresh state database, closed when the test ends.
func openAuditDB(t *testing.T) *DB {
	db, err := Open(context.Background(), newStatePath(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestAuditRowStoresFingerprintOnlyWithoutStatement: a row that records
// its statement (shape and constants) stores NULL for the fingerprint,
// read from the columns themselves; a row without one (a refusal, SET,
// SHOW) keeps its fingerprint as before, packed as an integer when it is
// 16 hex digits and as text otherwise.
func TestAuditRowStoresFingerprintOnlyWithoutStatement(t *testing.T) {
	ctx := context.Background()
	db := openAuditDB(t)
	const shape = "select count(*) from people where suburb = $1"
	cases := []struct {
		name    string
		entry   AuditEntry
		wantNum sql.NullInt64
		wantTxt sql.NullString
		readFP  string // the fingerprint ListAudit reads back
	}{
		{"answered with its statement",
			AuditEntry{Analyst: "a", Fingerprint: "00112233445566ff", Kind: "query", Mechanism: "exact", Outcome: OutcomeAnswered,
				Shape: shape, Constants: []release.Constant{{Text: "x", String: true}}, Cells: []release.Cell{{Value: 3}}},
			sql.NullInt64{}, sql.NullString{}, ""},
		{"refused",
			AuditEntry{Analyst: "b", Fingerprint: "00112233445566ff", Kind: "invalid", Mechanism: "exact", Outcome: OutcomeRefused, SQLState: "42601", Reason: "syntax error"},
			sql.NullInt64{Int64: 0x00112233445566ff, Valid: true}, sql.NullString{}, "00112233445566ff"},
		{"answered SHOW, no statement kept",
			AuditEntry{Analyst: "c", Fingerprint: "ffeeddccbbaa9988", Kind: "show", Mechanism: "exact", Outcome: OutcomeAnswered},
			sql.NullInt64{Int64: -0x0011223344556678, Valid: true}, sql.NullString{}, "ffeeddccbbaa9988"},
		{"refused, fingerprint not 16 hex digits",
			AuditEntry{Analyst: "d", Fingerprint: "f1", Kind: "invalid", Mechanism: "exact", Outcome: OutcomeRefused, SQLState: "25006", Reason: "writes"},
			sql.NullInt64{}, sql.NullString{String: "f1", Valid: true}, "f1"},
	}
	for _, tc := range cases {
		if err := db.AuditDurable(ctx, tc.entry); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range cases {
		var num sql.NullInt64
		var txt sql.NullString
		q := `SELECT l.fingerprint, l.fp_text FROM audit_log l JOIN audit_context c ON c.id = l.context WHERE c.analyst = ?`
		if err := db.SQL().QueryRowContext(ctx, q, tc.entry.Analyst).Scan(&num, &txt); err != nil {
			t.Fatal(err)
		}
		if num != tc.wantNum || txt != tc.wantTxt {
			t.Errorf("%s: stored fingerprint %+v, fp_text %+v; want %+v, %+v", tc.name, num, txt, tc.wantNum, tc.wantTxt)
		}
		got, err := db.ListAudit(ctx, AuditFilter{Analyst: tc.entry.Analyst})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Fingerprint != tc.readFP || got[0].Shape != tc.entry.Shape {
			t.Errorf("%s: read back %+v, want fingerprint %q and shape %q", tc.name, got, tc.readFP, tc.entry.Shape)
		}
	}
}

// TestAuditWithoutFingerprintListsAndExports: `audit list` prints "-" for
// the fingerprint of a row that records its statement, `audit export`
// keeps the field, empty; and a row of an older state file that stored a
// fingerprint beside its statement still reads it back.
func TestAuditWithoutFingerprintListsAndExports(t *testing.T) {
	ctx := context.Background()
	db := openAuditDB(t)
	e := AuditEntry{Analyst: "a", Fingerprint: "00112233445566ff", Kind: "query", Mechanism: "exact", Outcome: OutcomeAnswered,
		Shape: "select count(*) from people where age = $1", Constants: []release.Constant{{Text: "20"}}, Cells: []release.Cell{{Value: 7}}}
	if err := db.AuditDurable(ctx, e); err != nil {
		t.Fatal(err)
	}
	log, err := db.ListAudit(ctx, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := WriteAuditTable(&table, log); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(table.String()), "\n")
	if fields := strings.Fields(lines[len(lines)-1]); len(lines) != 2 || len(fields) < 4 || fields[3] != "-" {
		t.Errorf("audit list printed\n%s\nwant the fingerprint column \"-\"", table.String())
	}
	var export bytes.Buffer
	if _, err := db.ExportAudit(ctx, &export, AuditFilter{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(export.String(), `"fingerprint":""`) {
		t.Errorf("audit export wrote %s, want an empty fingerprint field", export.String())
	}

	// An older state file: the row holds a fingerprint beside its statement.
	if _, err := db.SQL().ExecContext(ctx, `UPDATE audit_log SET fingerprint = ?`, int64(0x00112233445566ff)); err != nil {
		t.Fatal(err)
	}
	if log, err = db.ListAudit(ctx, AuditFilter{}); err != nil {
		t.Fatal(err)
	}
	if len(log) != 1 || log[0].Fingerprint != "00112233445566ff" || log[0].Release().Statement() != "select count(*) from people where age = 20" {
		t.Errorf("older row read back as %+v", log)
	}
}
