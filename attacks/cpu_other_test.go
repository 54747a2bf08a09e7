//go:build !unix

package attacks_test

// processCPU is not measured here: benchStatements then reports no CPU.
func processCPU() (total, system int64) { return -1, -1 }
