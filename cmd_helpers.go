package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// addConfigFlags adds the flags that override config keys.
func addConfigFlags(cmd *cobra.Command) {
	cmd.Flags().String("database", "", "protected SQLite database (overrides the config)")
	cmd.Flags().String("state", "", "state database (overrides the config)")
	cmd.Flags().String("mechanism.name", "", "mechanism (overrides the config)")
}

// startCPUProfile profiles the command into the --cpuprofile file, if one
// was named; the returned function stops it.
func startCPUProfile(cmd *cobra.Command) (func(), error) {
	path, _ := cmd.Flags().GetString("cpuprofile")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeMemProfile writes the heap profile (allocations since the start,
// and what is live now) to the --memprofile file, if one was named.
func writeMemProfile(cmd *cobra.Command) error {
	path, _ := cmd.Flags().GetString("memprofile")
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	return nil
}

// workDir is the directory a command works in: keep when given (made if
// need be, left in place), else a temporary one that cleanup removes.
//
// A kept directory is made absolute: the configs written into it name their
// databases by path, and a config resolves a relative path against its own
// directory, so "demo-run/demo.db" would become demo-run/demo-run/demo.db.
func workDir(keep, prefix string) (dir string, cleanup func(), err error) {
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
