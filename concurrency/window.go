package concurrency

import (
	"math"
	"runtime"
	"sync/atomic"
	"time"
)

// window is what an algorithm sees of the requests released during one
// sampling window: the ones released as Success or Dropped (Ignored ones
// are not counted).
type window struct {
	// Start and End are the window's bounds, in the Limiter's clock.
	Start, End int64
	// Samples is the number of requests released in the window, Drops the
	// ones among them released as Dropped that were admitted since the
	// limit last fell (the fall already answered the others).
	Samples, Drops int64
	// MinRTT and AvgRTT are the least and the mean time from acquire to
	// release over the window's samples.
	MinRTT, AvgRTT time.Duration
	// MaxInFlight is the most requests in flight (this one included) that
	// any of the window's requests saw when it was admitted.
	MaxInFlight int
}

// acc accumulates one window. Releases add to it without a lock: a writer
// announces itself in writers, checks the window is still current, then
// adds; the updater swaps the current window and waits for writers to
// leave before it reads, so no sample is split or lost.
type acc struct {
	writers  atomic.Int64
	start    atomic.Int64
	n, drops atomic.Int64
	sum      atomic.Int64
	min      atomic.Int64
	maxIn    atomic.Int64
}

func (a *acc) reset(start int64) {
	a.start.Store(start)
	a.n.Store(0)
	a.drops.Store(0)
	a.sum.Store(0)
	a.min.Store(math.MaxInt64)
	a.maxIn.Store(0)
}

func (a *acc) add(rtt, inflight int64, drop bool) {
	a.n.Add(1)
	if drop {
		a.drops.Add(1)
	}
	a.sum.Add(rtt)
	for m := a.min.Load(); rtt < m && !a.min.CompareAndSwap(m, rtt); m = a.min.Load() {
	}
	for m := a.maxIn.Load(); inflight > m && !a.maxIn.CompareAndSwap(m, inflight); m = a.maxIn.Load() {
	}
}

func (a *acc) window(end int64) window {
	n := a.n.Load()
	w := window{Start: a.start.Load(), End: end, Samples: n, Drops: a.drops.Load(),
		MinRTT: time.Duration(a.min.Load()), MaxInFlight: int(a.maxIn.Load())}
	if n > 0 {
		w.AvgRTT = time.Duration(a.sum.Load() / n)
	} else {
		w.MinRTT = 0
	}
	return w
}

// sampler holds the two windows the Limiter alternates between and the
// time of the next update.
type sampler struct {
	cur      atomic.Pointer[acc]
	accs     [2]acc
	next     atomic.Int64 // no update before this time
	updating atomic.Bool  // held by the one caller running an update
}

func (s *sampler) init(now int64) {
	s.accs[0].reset(now)
	s.accs[1].reset(now)
	s.cur.Store(&s.accs[0])
	s.next.Store(now)
}

// record adds one sample to the current window.
func (s *sampler) record(rtt, inflight int64, drop bool) {
	for {
		a := s.cur.Load()
		a.writers.Add(1)
		if s.cur.Load() == a {
			a.add(rtt, inflight, drop)
			a.writers.Add(-1)
			return
		}
		a.writers.Add(-1)
	}
}

// swap closes the current window at now and returns it; the next one
// starts at now. Only the holder of updating calls it.
func (s *sampler) swap(now int64) window { return s.close(now).window(now) }

// close makes a fresh window current and returns the old one once no
// writer is adding to it.
func (s *sampler) close(now int64) *acc {
	old := s.cur.Load()
	nw := &s.accs[0]
	if old == nw {
		nw = &s.accs[1]
	}
	nw.reset(now)
	// A swap, not a store: a read-modify-write keeps the new window's
	// publication ahead of the writers load below on every target,
	// including emulators that let a release store pass a later acquire
	// load (a writer would then add to a window already returned).
	s.cur.Swap(nw)
	for old.writers.Load() != 0 {
		runtime.Gosched() // a writer between its announcement and its last add
	}
	return old
}
