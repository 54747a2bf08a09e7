package state

import (
	"bytes"
	"context"
	"os"
	"testing"

	"countwall/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// onPostgres, when set, gives each test a fresh PostgreSQL state database.
var onPostgres *pgtest.Srv

// newStatePath is where a test keeps its state (pgtest.StatePath).
func newStatePath(t *testing.T) string { return pgtest.StatePath(t, onPostgres) }

// TestPostgresState runs the audit log's tests against a PostgreSQL state
// database, and checks that instances sharing it share one secret.
func TestPostgresState(t *testing.T) {
	onPostgres = pgtest.Server(t)
	defer func() { onPostgres = nil }()
	t.Run("audit log in order, flushed on close", TestAuditLogIsWrittenInOrderAndFlushedOnClose)
	t.Run("audit list filters", TestListAuditFiltersAndPrints)
	t.Run("audit row keeps statement and cells", TestAuditRowKeepsStatementAndCells)
	t.Run("export and retention", TestExportAndRetentionNeverTouchTheLedger)
	t.Run("interned ids found again", TestAuditRowsAfterTheCacheStartsAfresh)
	t.Run("batches keep every row in order", TestAuditBatchesKeepEveryRowInOrder)
	t.Run("fingerprint only without a statement", TestAuditRowStoresFingerprintOnlyWithoutStatement)
	t.Run("list and export without a fingerprint", TestAuditWithoutFingerprintListsAndExports)
	t.Run("audit row keeps its query", TestAuditRowKeepsQuery)
	t.Run("audit gains the query column", TestAuditGainsTheQueryColumn)
	t.Run("audit.sync normal", func(t *testing.T) {
		// The audit transaction sets synchronous_commit off for itself; its
		// rows are there after the instance closes.
		url := newStatePath(t)
		db, err := Open(context.Background(), url, Options{AuditSync: AuditSyncNormal})
		if err != nil {
			t.Fatal(err)
		}
		answeredAfterReopen(t, db, url, 3)
	})
	t.Run("instances share one secret", func(t *testing.T) {
		ctx := context.Background()
		url := newStatePath(t)
		var secrets [][]byte
		for range 3 {
			db, err := Open(ctx, url, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			secrets = append(secrets, db.Secret())
		}
		if len(secrets[0]) != SecretBytes || !bytes.Equal(secrets[0], secrets[1]) || !bytes.Equal(secrets[0], secrets[2]) {
			t.Errorf("three instances of one state hold different secrets (or a short one)")
		}
	})
}
