// Package profile writes the Go profiles the commands' --cpuprofile and
// --memprofile flags ask for.
package profile

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// StartCPU profiles the process into the file at path, if one is named;
// the returned function stops it.
func StartCPU(path string) (stop func(), err error) {
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

// WriteHeap writes the heap profile (allocations since the start, and what
// is live now) to the file at path, if one is named.
func WriteHeap(path string) error {
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
