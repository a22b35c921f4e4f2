package limittest

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time the calling thread has used, in ns.
func threadCPU() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

// processCPU returns the CPU time the process has used, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

const haveCPUTime = true
