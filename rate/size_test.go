package rate

import (
	"testing"
	"unsafe"
)

// TestReservationSize: a Reservation is at most the 64 bytes of
// x/time/rate's, so a caller that keeps one on the heap allocates no more
// than it did before the change of import.
func TestReservationSize(t *testing.T) {
	if n := unsafe.Sizeof(Reservation{}); n > 64 {
		t.Fatalf("a Reservation is %d bytes, more than x/time/rate's 64", n)
	}
}
