package striped

import (
	"github.com/cellrate/cellrate/internal/bucketcore"
	"github.com/cellrate/cellrate/internal/intmath"
)

// lines returns two points of the refill line of a bucket state the steps
// returned: empty, where the line crosses zero tokens, rounded down to a
// whole ns, so that the bucket holds at most min(burst, (x-empty)*rate)
// tokens at any time x (no take raises the line); and full, where it
// reaches the burst, exactly full + fullRem/e ns with e = Rate()'s events
// (the units refilled per ns) and fullRem < e: the end of the refill slot
// of the last token taken. Each saturates at the ends of int64 time.
//
// It reads the state's layout (T is the time with its sign bit flipped,
// Deficit the units missing, a token Unit() units): that layout is
// bucket's, described in ARCHITECTURE.md.
func lines(ps *bucketcore.Params, s bucketcore.State) (empty, full int64, fullRem uint64) {
	events, _ := ps.Rate()
	e := uint64(events)
	capU := ps.Burst() * ps.Unit()
	t := int64(s.T ^ 1<<63)
	empty = intmath.SatAdd(t, intmath.FloorDiv(int64(s.Deficit)-capU, e))
	full = intmath.SatAdd(t, int64(s.Deficit/e))
	return empty, full, s.Deficit % e
}
