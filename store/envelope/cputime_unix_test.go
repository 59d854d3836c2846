//go:build unix

package envelope_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the test process has used, user and system:
// benchmarks report it per operation, which a busy machine does not
// inflate the way it inflates wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
