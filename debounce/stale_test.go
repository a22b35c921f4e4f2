package debounce

import (
	"testing"
	"time"

	"github.com/cellrate/cellrate/nanotime"
)

// TestStaleCallAt: a call stamped before the latest one does not move the
// burst's end back. Calls at 0, 40 and 80 ms and then one stamped 40 ms:
// the quiet period runs from 80 ms, so fn runs at 130 ms, not at 90.
func TestStaleCallAt(t *testing.T) {
	bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
		d.Call()
		time.Sleep(40 * time.Millisecond)
		d.Call()
		time.Sleep(40 * time.Millisecond)
		d.Call()
		d.CallAt(clock() - 40*ms)
		time.Sleep(time.Second)
		equal(t, r.got(), []int64{130 * ms})
	})
}

// TestStopAfterLeadingRun: a call whose leading run has started is not
// pending, so Stop right after it reports false; a call after that run's
// start is pending (as Flush sees it), and Stop reports true.
func TestStopAfterLeadingRun(t *testing.T) {
	for _, trailing := range []bool{false, true} {
		bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
			d.Call()
			equal(t, r.got(), []int64{0})
			if d.Stop() {
				t.Errorf("trailing %v: Stop after the leading run reported a pending call", trailing)
			}
		}, WithEdges(true, trailing))
		bubble(t, 50*time.Millisecond, func(d *Debouncer, r *recorder, clock nanotime.Clock) {
			d.Call()
			time.Sleep(10 * time.Millisecond)
			d.Call()
			if !d.Stop() {
				t.Errorf("trailing %v: Stop with a call after the leading run reported none", trailing)
			}
		}, WithEdges(true, trailing))
	}
}
