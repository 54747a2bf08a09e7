package state

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"
)

// historyRow is one row of the ledger's history as a test reads it.
type historyRow struct {
	FirstAt, LastAt int64
	Analyst, Mech   string
	Kind            string
	Charges         int64
	Epsilon         float64
	Fingerprint     string
}

func readHistory(t *testing.T, db *sql.DB) []historyRow {
	t.Helper()
	rows, err := db.Query(`SELECT first_at, last_at, analyst, mechanism, kind, charges, epsilon, coalesce(fingerprint, '') FROM ledger ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []historyRow
	for rows.Next() {
		var r historyRow
		if err := rows.Scan(&r.FirstAt, &r.LastAt, &r.Analyst, &r.Mech, &r.Kind, &r.Charges, &r.Epsilon, &r.Fingerprint); err != nil {
			t.Fatal(err)
		}
		r.Epsilon = math.Round(r.Epsilon*1e9) / 1e9 // sums of 1e-6 charges, compared to 1e-9
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHistoryKeepsRunsNotStatements: with a reservation of 1,000 charges,
// 2,500 answers are three rows of the history (one per reservation
// settled, the last at Close), split where a reload changed the mechanism;
// a charge committed on its own is one row with its fingerprint.
func TestHistoryKeepsRunsNotStatements(t *testing.T) {
	ctx := context.Background()
	path := newStatePath(t)
	clock := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	tick := func() time.Time { clock = clock.Add(time.Millisecond); return clock }
	db := openStateDB(t, path)
	l, err := OpenLedger(ctx, db, LedgerOptions{Reserve: 1000, Now: tick})
	if err != nil {
		t.Fatal(err)
	}
	// A power of two, so that a reservation of 1,000 charges holds 1,000 of
	// them exactly.
	const unit = 0x1p-20
	sum := func(n int64) float64 { return math.Round(float64(n)*unit*1e9) / 1e9 }
	for i := 1; i <= 2500; i++ {
		mech := "idp"
		if i > 1500 {
			mech = "bdp"
		}
		if _, err := l.Charge(ctx, Entry{Analyst: "eve", Mechanism: mech, Kind: "idp", Epsilon: unit, Fingerprint: fmt.Sprint(i)}, Unlimited()); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	direct, err := OpenLedger(ctx, db, LedgerOptions{Reserve: 1, Now: tick})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Charge(ctx, Entry{Analyst: "ann", Mechanism: "laplace", Kind: dp, Epsilon: 0.5, Fingerprint: "00ff"}, Unlimited()); err != nil {
		t.Fatal(err)
	}
	ms := func(n int64) int64 { return time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC).UnixMicro() + n*1000 }
	want := []historyRow{
		{ms(1), ms(1000), "eve", "idp", "idp", 1000, sum(1000), ""},
		{ms(1001), ms(1500), "eve", "idp", "idp", 500, sum(500), ""},
		{ms(1501), ms(2000), "eve", "bdp", "idp", 500, sum(500), ""},
		{ms(2001), ms(2500), "eve", "bdp", "idp", 500, sum(500), ""},
		{ms(2501), ms(2501), "ann", "laplace", "dp", 1, 0.5, "00ff"},
	}
	if got := readHistory(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("history:\n got %+v\nwant %+v", got, want)
	}
	if eps, _ := durableSpent(t, path, "eve", "idp"); eps != 2500*unit {
		t.Errorf("eve spent %g, want %g", eps, 2500*unit)
	}
}

// TestLedgerMigratesHistory: a state file whose history has one row per
// charge (with and without the rho column) is rewritten into runs of at
// most 1,000 charges when the ledger opens, with the same sums, counts and
// times, and the balances untouched; opening it again changes nothing.
func TestLedgerMigratesHistory(t *testing.T) {
	for _, rho := range []bool{false, true} {
		t.Run(fmt.Sprintf("rho column %v", rho), func(t *testing.T) {
			ctx := context.Background()
			path := newStatePath(t)
			db := openStateDB(t, path)
			writeOldHistory(t, db, rho)
			for range 2 {
				if _, err := OpenLedger(ctx, db, LedgerOptions{}); err != nil {
					t.Fatal(err)
				}
				at := func(s int64) int64 { return time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC).UnixMicro() + s*1_000_000 }
				want := []historyRow{
					{at(1), at(999), "ann", "idp", "idp", 999, 0.000999, ""},
					{at(1000), at(1999), "ann", "idp", "idp", 1000, 0.001, ""},
					{at(2000), at(2500), "ann", "idp", "idp", 501, 0.000501, ""},
					{at(2501), at(2501), "bob", "laplace", "dp", 1, 0.25, "beef"},
				}
				if got := readHistory(t, db); !reflect.DeepEqual(got, want) {
					t.Errorf("history:\n got %+v\nwant %+v", got, want)
				}
				if eps, _ := durableSpent(t, path, "bob", dp); eps != 0.25 {
					t.Errorf("bob spent %g, want 0.25", eps)
				}
			}
		})
	}
}

// writeOldHistory writes the ledger of an earlier version: one row per
// charge, its time as RFC 3339 text, one second apart: 2,500 charges of
// ann's, then one of bob's.
func writeOldHistory(t *testing.T, db *sql.DB, withRho bool) {
	t.Helper()
	cols := `id INTEGER PRIMARY KEY, at TEXT NOT NULL, analyst TEXT NOT NULL, mechanism TEXT NOT NULL, kind TEXT NOT NULL, epsilon REAL NOT NULL, delta REAL NOT NULL, fingerprint TEXT NOT NULL`
	if withRho {
		cols += `, rho REAL NOT NULL DEFAULT 0`
	}
	for _, stmt := range []string{
		`CREATE TABLE ledger (` + cols + `)`,
		`CREATE INDEX ledger_analyst ON ledger (analyst, kind)`,
		`CREATE TABLE ledger_spent (analyst TEXT NOT NULL, kind TEXT NOT NULL, epsilon REAL NOT NULL, delta REAL NOT NULL, PRIMARY KEY (analyst, kind))`,
		`INSERT INTO ledger_spent VALUES ('ann', 'idp', 0.0025, 0), ('bob', 'dp', 0.25, 0)`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	insert := `INSERT INTO ledger (id, at, analyst, mechanism, kind, epsilon, delta, fingerprint) VALUES (?, ?, ?, ?, ?, ?, 0, ?)`
	for i := int64(1); i <= 2501; i++ {
		analyst, mech, kind, eps, fp := "ann", "idp", "idp", 1e-6, fmt.Sprintf("%04x", i)
		if i == 2501 {
			analyst, mech, kind, eps, fp = "bob", "laplace", "dp", 0.25, "beef"
		}
		if _, err := tx.Exec(insert, i, start.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano), analyst, mech, kind, eps, fp); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
