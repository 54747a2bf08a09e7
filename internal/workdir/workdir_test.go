package workdir

import (
	"os"
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
