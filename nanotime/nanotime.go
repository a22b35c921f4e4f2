// Package nanotime reads monotonic time as int64 nanoseconds, the time unit
// of every cellrate limiter. Use Now for the ...At methods' now, Coarse when a
// cheaper, coarser reading will do, and Since in testing/synctest tests. See
// ExampleNow, ExampleCoarse and ExampleSince.
//
// Now is runtime.nanotime: monotonic, never stepped by wall-clock changes,
// with an origin fixed for the life of the process. Only differences between
// its values mean anything. It costs about what runtime.nanotime costs
// (vDSO clock_gettime on Linux), roughly half of time.Now.
//
// Coarse is a cached clock for callers that can trade precision for speed:
// reading it costs two uncontended atomic loads, and its value lags Now by at
// most its resolution plus the delay of the Go scheduler in running its
// updater (see Coarse).
//
// Now does not see testing/synctest's fake clock: inside a synctest bubble
// it keeps reading real time. Since returns a clock built on time.Since,
// which does follow the bubble's fake time; use it to drive limiters'
// ...At methods in such tests.
package nanotime

import _ "unsafe" // for go:linkname

// runtimeNano is the runtime's monotonic clock. The runtime keeps this
// linkname working because widely used modules depend on it.
//
//go:linkname runtimeNano runtime.nanotime
//go:noescape
func runtimeNano() int64

// Now returns the current monotonic time in nanoseconds.
func Now() int64 { return runtimeNano() }
