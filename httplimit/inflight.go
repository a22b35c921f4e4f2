package httplimit

import (
	"hash/maphash"
	"sync/atomic"

	"github.com/cellrate/cellrate/concurrency"
	"github.com/cellrate/cellrate/httplimit/internal/keypart"
)

// flightSlots is the counters in each row of a per-client in-flight sketch.
const flightSlots = 1 << 12

// flights counts each client's requests in flight in a fixed sketch: two
// rows of counters, each indexed by its own seeded hash of the key. A
// request is admitted only if its counter in both rows is below the cap,
// and then counts in both, so every counter of a client counts all its
// requests in flight and none passes the cap: a client never has more in
// flight. A client whose two counters both count other clients too is
// refused early; it is never admitted past its cap.
type flights struct {
	limit int32
	seeds [2]maphash.Seed
	rows  [2][]atomic.Int32
}

func newFlights(limit int) *flights {
	f := &flights{limit: int32(min(limit, 1<<30))}
	for i := range f.rows {
		f.seeds[i] = maphash.MakeSeed()
		f.rows[i] = make([]atomic.Int32, flightSlots)
	}
	return f
}

// slot is the index of k's counter in row i.
func (f *flights) slot(i int, k *keypart.Key) uint32 {
	var h maphash.Hash
	h.SetSeed(f.seeds[i])
	h.WriteByte(byte(k.Kind))
	if k.Addr.IsValid() {
		b, n := k.AddrBytes()
		h.Write(b[:n])
	}
	h.WriteString(k.S)
	return uint32(h.Sum64() % flightSlots)
}

// acquire counts a request of k in both rows if both counters are below
// the limit, else counts nothing.
func (f *flights) acquire(k *keypart.Key) (slots [2]uint32, ok bool) {
	for i := range f.rows {
		slots[i] = f.slot(i, k)
		c := &f.rows[i][slots[i]]
		for {
			n := c.Load()
			if n >= f.limit {
				if i == 1 {
					f.rows[0][slots[0]].Add(-1)
				}
				return slots, false
			}
			if c.CompareAndSwap(n, n+1) {
				break
			}
		}
	}
	return slots, true
}

func (f *flights) release(slots [2]uint32) {
	for i := range f.rows {
		f.rows[i][slots[i]].Add(-1)
	}
}

// hold is what an admitted request holds in flight until it is served.
type hold struct {
	f     *flights
	slots [2]uint32
	tok   concurrency.Token
}

// take acquires the policy's in-flight caps for k at now, the client's
// first, or nothing.
func (p *policy) takeFlight(h *hold, k *keypart.Key, now int64) bool {
	if p.flights != nil {
		slots, ok := p.flights.acquire(k)
		if !ok {
			return false
		}
		h.f, h.slots = p.flights, slots
	}
	if p.inFlight != nil {
		tok, ok := p.inFlight.TryAcquireAt(now)
		if !ok {
			h.release(concurrency.Ignored)
			return false
		}
		h.tok = tok
	}
	return true
}

// held reports whether h holds a slot.
func (h *hold) held() bool { return h.f != nil || h.tok != (concurrency.Token{}) }

// release gives back what h holds (nothing for the zero hold), telling
// the global limit's algorithm how the request ended.
func (h *hold) release(o concurrency.Outcome) {
	if h.f != nil {
		h.f.release(h.slots)
		h.f = nil
	}
	h.tok.Release(o)
	h.tok = concurrency.Token{}
}
