//go:build unix

package attacks_test

import "syscall"

// processCPU is the CPU time the process has used, user and system, in
// nanoseconds, and the system part alone (the fsyncs among it).
func processCPU() (total, system int64) {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return -1, -1
	}
	return u.Utime.Nano() + u.Stime.Nano(), u.Stime.Nano()
}
