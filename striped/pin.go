package striped

import _ "unsafe" // for go:linkname

// procPin disables preemption of the calling goroutine and returns the id of
// the P it runs on, in [0, GOMAXPROCS). Until procUnpin, no other goroutine
// runs on that P and GOMAXPROCS cannot change (changing it stops the world,
// which waits for every P to reach a preemption point).
//
//go:linkname procPin runtime.procPin
func procPin() int

// procUnpin ends the section begun by procPin.
//
//go:linkname procUnpin runtime.procUnpin
func procUnpin()
