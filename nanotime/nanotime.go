// Package nanotime reads the monotonic clock in nanoseconds.
//
// Now returns runtime.nanotime: monotonic, never adjusted by wall-clock
// changes, with an arbitrary origin shared by the whole process. Only
// differences between its values mean anything.
package nanotime

import _ "unsafe" // for go:linkname

//go:linkname runtimeNano runtime.nanotime
//go:noescape
func runtimeNano() int64

// Now returns the current monotonic time in nanoseconds.
func Now() int64 { return runtimeNano() }
