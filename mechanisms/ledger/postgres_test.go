package ledger

import (
	"os"
	"testing"

	"countwall/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// onPostgres, when set, gives each test a fresh PostgreSQL state database
// instead of a SQLite file: the same tests, the other backend.
var onPostgres *pgtest.Srv

// newStatePath is where a test keeps its state (pgtest.StatePath).
func newStatePath(t *testing.T) string { return pgtest.StatePath(t, onPostgres) }

// TestPostgresLedger runs the ledger's tests against a PostgreSQL state
// database: caps, kinds, grants and resets; eight goroutines and two
// processes racing to one analyst's cap; SIGKILL of a charging process
// twenty times; zCDP composition; held caps; the charge's transaction.
func TestPostgresLedger(t *testing.T) {
	onPostgres = pgtest.Server(t)
	defer func() { onPostgres = nil }()
	for name, test := range map[string]func(*testing.T){
		"caps kinds grants reset": TestLedgerCapsKindsGrantsReset,
		"race goroutines":         TestLedgerRaceGoroutines,
		"race processes":          TestLedgerRaceProcesses,
		"crash":                   TestLedgerCrash,
		"zcdp":                    TestLedgerComposesRhoUnderZCDP,
		"hold never raises":       TestHoldNeverRaisesACap,
		"list shows held caps":    TestListShowsHeldCaps,
		"within":                  TestWithinRunsInTheChargesTransaction,
	} {
		t.Run(name, test)
	}
}
