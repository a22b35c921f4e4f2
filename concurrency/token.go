package concurrency

import (
	"context"
	"fmt"
	"math"
)

// Outcome is how a request ended, for the limit's algorithm.
type Outcome uint8

const (
	// Success is a request the service handled: its latency is a sample.
	Success Outcome = iota
	// Dropped is a request that failed from overload (a timeout, a 503
	// from further down): a sample, and a loss the algorithm backs off on
	// if it was admitted after the limit last fell (requests already in
	// flight when it fell were answered by that fall, as TCP backs off
	// once per round trip).
	Dropped
	// Ignored is a request whose latency says nothing about the service's
	// load (it failed validation, its client went away): no sample.
	Ignored
)

// Token is one admitted request's hold on a Limiter. The zero Token holds
// nothing. Copies of a Token are the same hold: the first Release of any
// of them frees it, later ones do nothing.
type Token struct {
	l        *Limiter
	slot     int32
	inflight int32
	gen      uint64
	start    int64
}

// Release is ReleaseAt with the Limiter's clock.
func (t Token) Release(o Outcome) bool {
	if t.l == nil {
		return false
	}
	return t.ReleaseAt(t.l.clock(), o)
}

// ReleaseAt gives the token's slot back at now and records the request's
// latency (now less the acquire time) and outcome for the limit's
// algorithm. It reports whether this call released the token: false for
// the zero Token and for a token already released (by this copy or
// another), which leaves the in-flight count alone. It takes no lock.
func (t Token) ReleaseAt(now int64, o Outcome) bool {
	l := t.l
	if l == nil || !l.slots.free(int(t.slot), t.gen) {
		return false
	}
	l.inflight.Add(-1)
	if l.alg != nil && o != Ignored {
		// A drop of a request admitted before the limit last fell was
		// answered by that fall: it is a sample, not a loss.
		l.s.record(max(0, now-t.start), int64(t.inflight), o == Dropped && t.start >= l.fell.Load())
		l.maybeUpdate(now)
	}
	l.w.wake()
	return true
}

// Start returns the time the token was acquired at, in the Limiter's clock.
func (t Token) Start() int64 { return t.start }

// Do runs fn holding a token from l, and releases it when fn returns or
// panics: as Success when fn returns nil, as Dropped when fn returns an
// error for which isDrop (nil: none) reports true, and as Ignored on any
// other error or a panic, which Do then repanics. It returns Acquire's
// error without running fn.
func (l *Limiter) Do(ctx context.Context, fn func() error, isDrop func(error) bool) (err error) {
	tok, err := l.Acquire(ctx)
	if err != nil {
		return err
	}
	defer tok.Release(Ignored) // only if fn panics: the release below frees it otherwise
	err = fn()
	switch {
	case err == nil:
		tok.Release(Success)
	case isDrop != nil && isDrop(err):
		tok.Release(Dropped)
	default:
		tok.Release(Ignored)
	}
	return err
}

func (o Outcome) String() string {
	switch o {
	case Success:
		return "Success"
	case Dropped:
		return "Dropped"
	case Ignored:
		return "Ignored"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// maybeUpdate runs the algorithm if the current window may close at now
// and no other caller is running it.
func (l *Limiter) maybeUpdate(now int64) {
	if !l.closable(now) {
		return
	}
	if !l.s.updating.CompareAndSwap(false, true) {
		return
	}
	defer l.s.updating.Store(false)
	if !l.closable(now) {
		return // another caller closed the window meanwhile
	}
	w := l.s.swap(now)
	old := l.limitFloat()
	nl := min(l.max, max(l.min, l.alg.update(old, w)))
	if math.IsNaN(nl) {
		nl = old
	}
	if nl < old {
		l.fell.Store(now)
	}
	l.limit.Store(math.Float64bits(nl))
	d := min(l.maxWin, max(l.minWin, 2*int64(w.AvgRTT)))
	l.s.next.Store(now + d)
	if int(nl) > int(old) {
		l.w.wakeAll()
	}
}

// closable reports whether the current window may close at now: its
// minimum duration is over and it holds enough samples, or its maximum
// duration is over.
func (l *Limiter) closable(now int64) bool {
	if now < l.s.next.Load() {
		return false
	}
	a := l.s.cur.Load()
	return a.n.Load() >= l.minN || now-a.start.Load() >= l.maxWin
}
