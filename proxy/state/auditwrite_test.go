package state

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"countwall/proxy/state/release"
)

// TestInternedCacheIsBounded: the ids kept of what the audit wrote once
// stay under their limits in entries and in the bytes their keys hold,
// however long the shapes an analyst sends.
func TestInternedCacheIsBounded(t *testing.T) {
	var c interned[string]
	long := strings.Repeat("x", 1<<20) // a 1 MiB shape
	for i := range 40 {
		c.keep(map[string]int64{fmt.Sprint(i, long): int64(i)}, stringBytes)
		if c.bytes > maxInternedBytes {
			t.Fatalf("after %d shapes the cache holds %d bytes, over %d", i+1, c.bytes, maxInternedBytes)
		}
		if id, ok := c.lookup(fmt.Sprint(i, long)); !ok || id != int64(i) {
			t.Fatalf("shape %d: id %d, %v", i, id, ok)
		}
	}
	if len(c.ids) >= 40 {
		t.Errorf("the cache kept %d shapes of 1 MiB", len(c.ids))
	}
	var small interned[string]
	for i := range maxInterned + 10 {
		small.keep(map[string]int64{fmt.Sprint(i): int64(i)}, stringBytes)
	}
	if len(small.ids) > maxInterned {
		t.Errorf("the cache kept %d entries, over %d", len(small.ids), maxInterned)
	}
}

// TestAuditRowsAfterTheCacheStartsAfresh: once the cache has started
// afresh, rows still refer to the one context and shape row each, found
// again in the database, and read back as written.
func TestAuditRowsAfterTheCacheStartsAfresh(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, newStatePath(t), Options{AuditSync: AuditSyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entry := AuditEntry{Analyst: "a", Kind: "query", Mechanism: "exact", Outcome: OutcomeAnswered,
		Fingerprint: "0123456789abcdef", Shape: "select count(*) from people where suburb = $1"}
	for i := range 3 {
		if err := db.AuditDurable(ctx, entry); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			db.contexts.keep(nil, contextKey.bytes) // nothing learnt: nothing changes
			db.contexts.ids, db.shapes.ids = nil, nil
		}
	}
	var contexts, shapes, rows int
	for q, n := range map[string]*int{"SELECT count(*) FROM audit_context": &contexts, "SELECT count(*) FROM audit_shape": &shapes, "SELECT count(*) FROM audit_log": &rows} {
		if err := db.SQL().QueryRowContext(ctx, q).Scan(n); err != nil {
			t.Fatal(err)
		}
	}
	if contexts != 1 || shapes != 1 || rows != 3 {
		t.Fatalf("%d contexts, %d shapes, %d rows; want 1, 1, 3", contexts, shapes, rows)
	}
	log, err := db.ListAudit(ctx, AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range log {
		if e.Shape != entry.Shape || e.Analyst != "a" || e.Fingerprint != "" {
			t.Errorf("read back %+v", e)
		}
	}
}

// TestAuditBatchesKeepEveryRowInOrder: a batch is written sixteen rows a
// statement and the rest one a statement; whatever its size, every row is
// there once, in the batch's order, with its own context, shape and
// constants.
func TestAuditBatchesKeepEveryRowInOrder(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{1, auditRowsPerInsert - 1, auditRowsPerInsert, auditRowsPerInsert + 1, 3*auditRowsPerInsert + 5} {
		t.Run(fmt.Sprint(n, " rows"), func(t *testing.T) {
			db, err := Open(ctx, newStatePath(t), Options{AuditSync: AuditSyncNormal})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			batch := make([]AuditEntry, n)
			for i := range batch {
				batch[i] = AuditEntry{Analyst: fmt.Sprint("analyst-", i%3), Kind: "query", Mechanism: "laplace",
					Outcome: OutcomeAnswered, Shape: fmt.Sprintf("select count(*) from t where c%d = $1", i%5),
					Constants: []release.Constant{{Text: fmt.Sprint("value-", i), String: true}}}
			}
			if err := db.writeAudit(batch); err != nil {
				t.Fatal(err)
			}
			log, err := db.ListAudit(ctx, AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(log) != n {
				t.Fatalf("%d rows read back, want %d", len(log), n)
			}
			for i, e := range log {
				want := batch[i]
				if e.Analyst != want.Analyst || e.Shape != want.Shape || len(e.Constants) != 1 || e.Constants[0] != want.Constants[0] {
					t.Errorf("row %d: %s %q %v; want %s %q %v", i, e.Analyst, e.Shape, e.Constants, want.Analyst, want.Shape, want.Constants)
				}
			}
		})
	}
}
