// Package wallclock turns monotonic readings (nanotime.Now) into Unix
// nanoseconds for the times a limiter reports to people, such as the reset
// of an X-RateLimit-Reset header. It reads the wall clock again once a
// second of monotonic time has passed, so a step of the wall clock (NTP, a
// resumed virtual machine) shows within a second, while a conversion costs
// two atomic loads. Decisions never depend on it: they run on monotonic
// time alone.
package wallclock

import (
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/nanotime"
)

// refresh is how much monotonic time passes between readings of the wall
// clock.
const refresh = int64(time.Second)

// Offset converts monotonic readings to Unix nanoseconds. The zero Offset
// is ready to use; it must not be copied after first use.
type Offset struct {
	at   atomic.Int64 // the monotonic reading base was taken at; 0: never
	base atomic.Int64 // wall-clock ns minus monotonic ns

	// wall and mono, if set (by tests), replace time.Now and nanotime.Now.
	wall, mono func() int64
}

// Unix returns the Unix time in ns of the monotonic reading now. now may
// come from a clock other than nanotime.Now (a test's frozen one): the
// offset is measured between the real clocks and only refreshed by now.
func (o *Offset) Unix(now int64) int64 {
	if at := o.at.Load(); at == 0 || now-at >= refresh {
		o.take(now)
	}
	return o.base.Load() + now
}

// take measures the offset again. Concurrent takes each store a measure
// of it; which one stays does not matter.
func (o *Offset) take(now int64) {
	wall, mono := time.Now().UnixNano, nanotime.Now
	if o.wall != nil {
		wall, mono = o.wall, o.mono
	}
	o.base.Store(wall() - mono())
	o.at.Store(now)
}
