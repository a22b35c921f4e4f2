package nanotime

import "time"

// A Clock returns monotonic time in nanoseconds.
type Clock func() int64

// Since returns a Clock that reads time.Since(base) in nanoseconds, base
// being the time at which Since was called; its readings start near 0.
//
// Unlike Now it follows testing/synctest's fake clock when Since is called
// inside a bubble, so limiters driven by it can be tested in virtual time.
// Outside a bubble it measures the same elapsed time as Now, for a few
// nanoseconds more per call.
func Since() Clock {
	base := time.Now()
	return func() int64 { return int64(time.Since(base)) }
}
