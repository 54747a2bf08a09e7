// Package workdir is the directory a command works in: one the user named
// and keeps, or a temporary one removed when the work is done.
package workdir

import (
	"os"
	"path/filepath"
)

// Make returns keep (made if need be, left in place) or, when keep is
// empty, a new temporary directory that cleanup removes.
//
// A kept directory is made absolute: the configs written into it name their
// databases by path, and a config resolves a relative path against its own
// directory, so "demo-run/demo.db" would become demo-run/demo-run/demo.db.
func Make(keep, prefix string) (dir string, cleanup func(), err error) {
	if keep != "" {
		abs, err := filepath.Abs(keep)
		if err != nil {
			return "", nil, err
		}
		return abs, func() {}, os.MkdirAll(abs, 0o755)
	}
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// In runs work in the directory Make gives, then cleans it up.
func In(keep, prefix string, work func(dir string) error) error {
	dir, cleanup, err := Make(keep, prefix)
	if err != nil {
		return err
	}
	defer cleanup()
	return work(dir)
}
