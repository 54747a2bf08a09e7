package pgtest

import (
	"database/sql"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// TestPostgresServerAnswers starts the shared server and checks that a
// database made for one test is reachable and empty.
func TestPostgresServerAnswers(t *testing.T) {
	s := Server(t)
	url := s.NewDatabase(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("a new database has %d tables in public, want 0", tables)
	}
	var two int
	if err := db.QueryRow("SELECT 1 + $1::int", 1).Scan(&two); err != nil || two != 2 {
		t.Errorf("SELECT 1 + 1 = %d, %v", two, err)
	}
}
