package rate

import (
	"reflect"
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

// TestReservationNoCopy: a Reservation holds a value with pointer Lock and
// Unlock methods, which go vet's copylocks check reports copies of (a copy
// cancelled after the same tokens were reserved again would give back the
// later reservation's tokens).
func TestReservationNoCopy(t *testing.T) {
	f, ok := reflect.TypeFor[Reservation]().FieldByName("_")
	if !ok {
		t.Fatal("no marker field")
	}
	pt := reflect.PointerTo(f.Type)
	if _, ok := pt.MethodByName("Lock"); !ok {
		t.Fatal("the marker has no Lock")
	}
	if _, ok := pt.MethodByName("Unlock"); !ok {
		t.Fatal("the marker has no Unlock")
	}
}
