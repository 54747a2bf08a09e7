package attacks_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"countwall/config"
	"countwall/internal/pgtest"
	"countwall/proxy"
	"countwall/proxy/state"
)

// fixtureRoot holds the databases the tests share; TestMain removes it.
var fixtureRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "countwall-attacks-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureRoot = dir
	code := m.Run()
	pgtest.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

type fixture struct {
	once sync.Once
	path string
	err  error
}

var fixtures sync.Map // file name -> *fixture

// sharedDB builds the database name once per test run with build, and
// returns its path: generating a table for every test would cost more than
// the tests.
func sharedDB(t testing.TB, name string, build func(path string) error) string {
	t.Helper()
	v, _ := fixtures.LoadOrStore(name, &fixture{})
	f := v.(*fixture)
	f.once.Do(func() {
		f.path = filepath.Join(fixtureRoot, name)
		f.err = build(f.path)
	})
	if f.err != nil {
		t.Fatalf("building the %s fixture: %v", name, f.err)
	}
	return f.path
}

// openEngine fronts a database with an Engine in process, from the config
// body given (its database and state paths filled in by the caller), and
// closes it when the test ends.
func openEngine(t testing.TB, body string) (*proxy.Engine, *config.Config) {
	t.Helper()
	return openSeededEngine(t, body, 0)
}

// openSeededEngine is openEngine with reproducible noise from seed (0: fresh
// noise), which only a Go caller can ask for.
func openSeededEngine(t testing.TB, body string, seed int64) (*proxy.Engine, *config.Config) {
	t.Helper()
	return openEngineWith(t, body, proxy.Options{NoiseSeed: seed})
}

// openEngineWith is openEngine with the Engine's options.
func openEngineWith(t testing.TB, body string, opts proxy.Options) (*proxy.Engine, *config.Config) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "countwall.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if onPostgres != nil {
		cfg.Database = onPostgres.copyOf(t, cfg)
	}
	e, err := proxy.Open(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, cfg
}

// fixedSecret creates the state database at path with a firewall secret
// derived from seed, so that record keys, and with them sticky noise, are
// the same on every run; it returns the secret.
func fixedSecret(t testing.TB, path, seed string) []byte {
	t.Helper()
	st, err := state.Open(context.Background(), path, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	secret := sha256.Sum256([]byte(seed))
	if _, err := db.Exec("UPDATE secret SET value = ? WHERE id = 1", secret[:]); err != nil {
		t.Fatal(err)
	}
	return secret[:]
}
