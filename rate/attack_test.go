package rate_test

import (
	"testing"

	"github.com/cellrate/cellrate/rate"
)

// TestCancelAfterReuse: a Reservation cancelled twice, the second time after
// the same tokens were reserved again (the bucket back in the very state the
// first reservation wrote), gives nothing back the second time: the later
// reservation's tokens stay taken. (A copy of the Reservation could; go vet
// reports copies, see TestReservationNoCopy.)
func TestCancelAfterReuse(t *testing.T) {
	for _, burst := range []int{1, 3} {
		l := rate.NewLimiter(10, burst)
		r1 := l.ReserveN(at(0), burst)
		r1.CancelAt(at(0))
		r2 := l.ReserveN(at(0), burst) // writes the state r1 wrote
		if !r2.OK() || r2.DelayFrom(at(0)) != 0 {
			t.Fatalf("burst %d: the cancelled tokens were not there again", burst)
		}
		r1.CancelAt(at(0))
		if l.AllowN(at(0), 1) {
			t.Fatalf("burst %d: a second Cancel gave back the tokens of a later reservation", burst)
		}
	}
}

// TestZeroReservation: the zero Reservation is not OK, waits forever and
// cancels to nothing, as x/time/rate's.
func TestZeroReservation(t *testing.T) {
	var r rate.Reservation
	r.CancelAt(at(0))
	r.Cancel()
	if r.OK() || r.DelayFrom(at(0)) != rate.InfDuration {
		t.Fatalf("zero Reservation: OK %v, delay %v", r.OK(), r.DelayFrom(at(0)))
	}
}
