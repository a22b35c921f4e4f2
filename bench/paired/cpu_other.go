//go:build !linux

package paired

// cpuNow reports no CPU clock: measurements fall back to the wall clock.
func cpuNow(bool) (int64, bool) { return 0, false }
