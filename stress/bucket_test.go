package stress

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// testBucket is an exact integer token bucket (one unit per period ns)
// used to prove the limiter runs themselves: correct in a locked cell, and
// broken on purpose in the racy cell and with rebase.
type testBucket struct {
	burst, period int64
	// rebase makes a clock that went backwards restart the refill from
	// the earlier time, so time already credited is credited again.
	rebase bool
}

type bucketState struct{ tokens, last int64 }

// init is the state of a fresh, full bucket.
func (b testBucket) init() bucketState { return bucketState{tokens: b.burst, last: 0} }

func (b testBucket) step(s bucketState, now, n int64) (bucketState, limit.Result, error) {
	switch {
	case n < 0:
		return s, limit.Result{RetryAfter: limit.Never}, limit.ErrNegativeCost
	case n > b.burst:
		return s, limit.Result{RetryAfter: limit.Never}, limit.ErrCostExceedsBurst
	}
	if now > s.last {
		k := (now - s.last) / b.period
		if k >= b.burst-s.tokens {
			s = bucketState{tokens: b.burst, last: now}
		} else {
			s = bucketState{tokens: s.tokens + k, last: s.last + k*b.period}
		}
	} else if b.rebase {
		s.last = now
	}
	if n > s.tokens {
		return s, limit.Result{Remaining: s.tokens, RetryAfter: time.Duration((n-s.tokens)*b.period - (now - min(now, s.last)))}, nil
	}
	s.tokens -= n
	return s, limit.Result{OK: true, Remaining: s.tokens}, nil
}

func (b testBucket) anyStep(state any, now, n int64) (any, limit.Result, error) {
	return b.step(state.(bucketState), now, n)
}

// locked runs a step under a mutex: correct if the step is.
type locked[S any] struct {
	step func(s S, now, n int64) (S, limit.Result, error)
	mu   sync.Mutex
	s    S
}

func newLocked(b testBucket) limit.Limiter { return &locked[bucketState]{step: b.step, s: b.init()} }

func (l *locked[S]) AllowAt(now int64) bool {
	r, _ := l.AllowNAt(now, 1)
	return r.OK
}

func (l *locked[S]) AllowNAt(now, n int64) (limit.Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	next, r, err := l.step(l.s, now, n)
	if r.OK {
		l.s = next
	}
	return r, err
}

// racyBucket loads the state, steps, and stores the result without a
// compare-and-swap: concurrent decisions overwrite each other.
type racyBucket struct {
	b testBucket
	s atomic.Pointer[bucketState]
}

func newRacy(b testBucket) limit.Limiter {
	r := &racyBucket{b: b}
	s := b.init()
	r.s.Store(&s)
	return r
}

func (l *racyBucket) AllowAt(now int64) bool {
	r, _ := l.AllowNAt(now, 1)
	return r.OK
}

func (l *racyBucket) AllowNAt(now, n int64) (limit.Result, error) {
	next, r, err := l.b.step(*l.s.Load(), now, n)
	if r.OK {
		maybeYield()
		l.s.Store(&next)
	}
	return r, err
}
