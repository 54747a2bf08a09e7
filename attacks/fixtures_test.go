package attacks_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
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
