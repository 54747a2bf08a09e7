package pgtest

import (
	"database/sql"
	"os"
	"path/filepath"
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

// TestBinDirPrefersTheEnvironment: COUNTWALL_PG_BIN wins when it holds an
// initdb, and is passed over when it does not.
func TestBinDirPrefersTheEnvironment(t *testing.T) {
	withInitdb, without := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(withInitdb, "initdb"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COUNTWALL_PG_BIN", withInitdb)
	if got, ok := BinDir(); !ok || got != withInitdb {
		t.Errorf("BinDir() = %q, %v with COUNTWALL_PG_BIN holding an initdb; want %q, true", got, ok, withInitdb)
	}
	t.Setenv("COUNTWALL_PG_BIN", without)
	if got, _ := BinDir(); got == without {
		t.Errorf("BinDir() = %q, a directory without initdb", got)
	}
}

// TestVersionReadsTheDebianDirectory: BinDir picks the newest of Debian's
// /usr/lib/postgresql/<version>/bin by the number in its path.
func TestVersionReadsTheDebianDirectory(t *testing.T) {
	for dir, want := range map[string]int{
		"/usr/lib/postgresql/15/bin": 15,
		"/usr/lib/postgresql/9/bin":  9,
		"/opt/pg/bin":                0,
	} {
		if got := version(dir); got != want {
			t.Errorf("version(%q) = %d, want %d", dir, got, want)
		}
	}
}
