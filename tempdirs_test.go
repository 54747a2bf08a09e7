package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Tests leave nothing in the temporary directory: a test file that makes a
// directory with os.MkdirTemp (a fixture its tests share, made once in a
// TestMain or a sync.Once) also removes it; a directory of one test is
// t.TempDir, which the testing package removes.
func TestTestsRemoveTheirTempDirs(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		src := string(b)
		for _, make := range []string{"os.MkdirTemp(", "os.CreateTemp("} {
			if strings.Contains(src, make) && !strings.Contains(src, "os.RemoveAll(") && !strings.Contains(src, "os.Remove(") {
				t.Errorf("%s: calls %s and never removes what it made; use t.TempDir, or remove it in TestMain", path, strings.TrimSuffix(make, "("))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
