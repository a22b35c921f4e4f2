package paired

import "golang.org/x/sys/unix"

// cpuNow returns the CPU time used so far, in ns: by the calling thread
// (thread) or by the whole process.
func cpuNow(thread bool) (int64, bool) {
	id := int32(unix.CLOCK_PROCESS_CPUTIME_ID)
	if thread {
		id = unix.CLOCK_THREAD_CPUTIME_ID
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}
