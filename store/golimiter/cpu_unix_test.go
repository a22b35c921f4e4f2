//go:build unix

package golimiter

import (
	"syscall"
	"testing"
)

// cpuNs returns the CPU time (user and system) the process has used, in
// ns: on a shared machine it spreads far less than wall time.
func cpuNs() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reportCPU reports the CPU time per op since start as cpu-ns/op.
func reportCPU(b *testing.B, start int64) {
	b.ReportMetric(float64(cpuNs()-start)/float64(b.N), "cpu-ns/op")
}
