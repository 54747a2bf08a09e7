package planner

import (
	"context"
	"countwall/internal/pgtest"
	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
	"countwall/planner/postgres"
	"database/sql"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// openPostgresDiffStore loads rows into a fresh PostgreSQL database, with
// the column types of fixture.PeopleDDL, and opens it as the store.
//
// With pgcrypto the store computes contributor keys in PostgreSQL;
// without, in Go from one row per unit.
func openPostgresDiffStore(t *testing.T, rows []fixture.Row, pgcrypto bool) *Store {
	t.Helper()
	url := pgtest.Server(t).NewDatabase(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE people (id integer, age integer, sex text, suburb text, income integer)`); err != nil {
		t.Fatal(err)
	}
	if pgcrypto {
		if _, err := db.Exec(`CREATE EXTENSION pgcrypto`); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		args := make([]any, len(fixture.Columns))
		for i, c := range fixture.Columns {
			args[i] = row[c]
		}
		if _, err := tx.Exec(`INSERT INTO people VALUES ($1, $2, $3, $4, $5)`, args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if pgcrypto {
		url += "&countwall_keys=pgcrypto"
	}
	s, err := OpenStore(url, plan.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if s.sql.(*postgres.Store).KeysInDatabase() != pgcrypto {
		t.Fatalf("the store sees hmac() %v, with pgcrypto %v", s.sql.(*postgres.Store).KeysInDatabase(), pgcrypto)
	}
	return s
}

// TestPostgresDifferentialRandomPredicates is the differential test against
// a PostgreSQL store: counts, units, contributor keys and GROUP BY cells of
// random predicates equal those computed in Go, row by row.
func TestPostgresDifferentialRandomPredicates(t *testing.T) {
	for _, keys := range []string{"keys in Go", "keys by pgcrypto"} {
		t.Run(keys, func(t *testing.T) {
			r := rand.New(rand.NewPCG(20240611, 7))
			rows := fixture.Rows(r, 400)
			differentialRandomPredicates(t, openPostgresDiffStore(t, rows, keys == "keys by pgcrypto"), r, rows, false, false)
		})
	}
}

// TestPostgresDifferentialBoundedCounts is the bounded differential test
// against a PostgreSQL store.
func TestPostgresDifferentialBoundedCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(20240611, 13))
	rows := fixture.Rows(r, 400)
	if paths := differentialBoundedCounts(t, openPostgresDiffStore(t, rows, false), r, rows, false); paths[ir.PathPostgres] == 0 {
		t.Errorf("no bounded run answered on PostgreSQL's path: %v", paths)
	}
}

// TestPostgresStoreIsReadOnly: a write reaching the store's pool is refused
// by the server.
func TestPostgresStoreIsReadOnly(t *testing.T) {
	s := openPostgresDiffStore(t, nil, false)
	_, err := s.db().ExecContext(context.Background(), `DELETE FROM people`)
	if err == nil {
		t.Fatal("a DELETE through the store's pool succeeded")
	}
	t.Log(err)
}

// TestPostgresKeysOption: countwall_keys=pgcrypto without the extension is
// refused at open, naming the fix; an unknown value is refused.
func TestPostgresKeysOption(t *testing.T) {
	url := pgtest.Server(t).NewDatabase(t)
	for _, tc := range []struct{ param, want string }{
		{"pgcrypto", "CREATE EXTENSION pgcrypto"},
		{"sql", "use pgcrypto or firewall"},
	} {
		s, err := OpenStore(url+"&countwall_keys="+tc.param, plan.StoreOptions{})
		if err == nil {
			s.Close()
			t.Errorf("countwall_keys=%s: opened", tc.param)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("countwall_keys=%s: %v, want it to say %q", tc.param, err, tc.want)
		}
	}
	s, err := OpenStore(url+"&countwall_keys=firewall", plan.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
