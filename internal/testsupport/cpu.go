package testsupport

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time of the whole process so far, all threads, in
// user and kernel mode: unlike the time per op, the load of other
// processes on the machine does not change it.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
