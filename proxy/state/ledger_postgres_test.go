package state

import (
	"testing"

	"countwall/internal/pgtest"
)

// TestPostgresLedger runs the ledger's tests against a PostgreSQL state
// database: caps, kinds, grants and resets; eight goroutines and two
// processes racing to one analyst's cap; SIGKILL of a charging process
// twenty times; zCDP composition and rho reserved in chunks; held caps; the charge's transaction;
// the history kept in runs, and migrated from one row per charge.
func TestPostgresLedger(t *testing.T) {
	onPostgres = pgtest.Server(t)
	defer func() { onPostgres = nil }()
	for name, test := range map[string]func(*testing.T){
		"caps kinds grants reset": TestLedgerCapsKindsGrantsReset,
		"race goroutines":         TestLedgerRaceGoroutines,
		"race processes":          TestLedgerRaceProcesses,
		"crash":                   TestLedgerCrash,
		"zcdp":                    TestLedgerComposesRhoUnderZCDP,
		"rho reservations":        TestRhoReservations,
		"hold never raises":       TestHoldNeverRaisesACap,
		"list shows held caps":    TestListShowsHeldCaps,
		"history in runs":         TestHistoryKeepsRunsNotStatements,
		"history migrated":        TestLedgerMigratesHistory,
	} {
		t.Run(name, test)
	}
}
