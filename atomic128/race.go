//go:build race

package atomic128

import (
	"runtime"
	"unsafe"
)

// The race detector does not see the assembly's memory accesses, so the
// operations tell it about their synchronization: every operation that may
// write releases (merging, as a chain of read-modify-writes does) before the
// instruction, so a reader that observes the write can never acquire before
// the release is recorded; every operation that reads acquires after it.
// A failed CompareAndSwap also releases (it cannot know beforehand), which
// can only hide a race, never report a false one.
//
// runtime.RaceRead and RaceWrite are not used on the pair: they model plain
// accesses, so two concurrent atomic operations annotated with them would be
// reported as racing each other. A plain access to other data stays
// unannotated and is reported as usual when unordered.

// raceUnannotated turns the annotations off, for the test that proves they
// are needed (a race build only).
var raceUnannotated bool

func raceAcquire(p *[2]uint64) {
	if !raceUnannotated {
		runtime.RaceAcquire(unsafe.Pointer(p))
	}
}

func raceReleaseMerge(p *[2]uint64) {
	if !raceUnannotated {
		runtime.RaceReleaseMerge(unsafe.Pointer(p))
	}
}
