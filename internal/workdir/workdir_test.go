package workdir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInRemovesOnlyATemporaryDirectory: a temporary directory is gone
// after the work; a kept one stays, with what the work wrote.
func TestInRemovesOnlyATemporaryDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	var temp string
	if err := In("", "workdir-test-", func(dir string) error { temp = dir; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(temp); !os.IsNotExist(err) {
		t.Errorf("temporary %s still there: %v", temp, err)
	}
	var kept string
	if err := In("kept", "workdir-test-", func(dir string) error {
		kept = dir
		return os.WriteFile(dir+"/f", []byte("x"), 0o600)
	}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(kept + "/f"); err != nil || string(b) != "x" {
		t.Errorf("kept %s: %q, %v", kept, b, err)
	}
}

// TestKeptWorkDirIsAbsolute: `demo --dir demo-run` writes configs that name
// their databases by the directory's path; a relative one would be resolved
// again against the config's own directory.
func TestKeptWorkDirIsAbsolute(t *testing.T) {
	t.Chdir(t.TempDir())
	dir, cleanup, err := Make("demo-run", "x-")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if !filepath.IsAbs(dir) || filepath.Base(dir) != "demo-run" {
		t.Fatalf("Make(\"demo-run\") = %q, want an absolute path ending in demo-run", dir)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("%s was not made: %v", dir, err)
	}
}
