package state

import (
	"bytes"
	"context"
	"reflect"
	"testing"
	"time"

	"countwall/mechanisms"
	"countwall/proxy/state/release"
)

// TestExportAndRetentionNeverTouchTheLedger: export writes JSON lines that
// read back as the entries; pruning deletes the audit rows before the
// cutoff and leaves every ledger row and balance as it was.
func TestExportAndRetentionNeverTouchTheLedger(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, newStatePath(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for day := 0; day < 4; day++ {
		if _, err := db.Ledger().Charge(ctx, Entry{Analyst: "ann", Mechanism: "laplace", Kind: mechanisms.AccountingDP, Epsilon: 0.25, Fingerprint: "f"}, Unlimited()); err != nil {
			t.Fatal(err)
		}
		e := AuditEntry{At: t0.AddDate(0, 0, day), Analyst: "ann", Fingerprint: "0000000000000001", Kind: "query", Mechanism: "laplace",
			Outcome: OutcomeAnswered, ChargeKind: "dp", Epsilon: 0.25, Shape: "select count(*) from people where age > $1",
			Constants: []release.Constant{{Text: "40"}}, Cells: []release.Cell{{Value: float64(10 + day)}}}
		if err := db.AuditDurable(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	n, err := db.ExportAudit(ctx, &buf, AuditFilter{Analyst: "ann"})
	if err != nil || n != 4 {
		t.Fatalf("exported %d (%v), want 4", n, err)
	}
	back, err := release.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := db.ListAudit(ctx, AuditFilter{})
	for i := range want {
		if !reflect.DeepEqual(back[i], want[i].Release()) {
			t.Errorf("line %d reads back as %+v, want %+v", i+1, back[i], want[i].Release())
		}
	}
	if got := back[2].Statement(); got != "select count(*) from people where age > 40" {
		t.Errorf("statement %q", got)
	}
	ledgerRows := func() (n int) {
		if err := db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM ledger`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := ledgerRows()
	pruned, err := db.PruneAudit(ctx, t0.AddDate(0, 0, 2))
	if err != nil || pruned != 2 {
		t.Fatalf("pruned %d (%v), want 2", pruned, err)
	}
	left, _ := db.ListAudit(ctx, AuditFilter{})
	if len(left) != 2 || left[0].Cells[0].Value != 12 {
		t.Errorf("after pruning: %+v", left)
	}
	bals, err := db.Ledger().Balances(ctx, "ann", Unlimited())
	if err != nil {
		t.Fatal(err)
	}
	if ledgerRows() != before || bals[0].EpsilonSpent != 1 {
		t.Errorf("pruning touched the ledger: %d rows (was %d), spent %g", ledgerRows(), before, bals[0].EpsilonSpent)
	}
}
