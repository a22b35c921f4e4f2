package nanotime

import (
	"runtime"
	"sync/atomic"
	"time"
)

// DefaultResolution is the resolution of a zero Coarse.
const DefaultResolution = time.Millisecond

// idleTicks is how many ticks the updater runs without a reader before it
// checks whether anyone read; two such checks in a row with no reader stop it.
const idleTicks = 64

// Updater states, in Coarse.state.
const (
	stateStopped  = iota // no updater: the cached value is stale (the zero value)
	stateStarting        // a reader is starting the updater
	stateFresh           // updater running, read since the last idle check
	stateUnread          // updater running, no read since the last idle check
)

// Coarse is a cached monotonic clock. A goroutine refreshes its value from
// Now every resolution; Now returns that value.
//
// Staleness: Coarse.Now() is never ahead of the package's Now, and lags it by
// at most the resolution plus the scheduling delay of the updater goroutine.
// That delay is normally microseconds, but it is unbounded on an overloaded
// machine or during a stop-the-world pause: callers that need a hard bound
// must use Now.
//
// The updater starts with the first read and exits after between 64 and 128
// ticks with no read, so an unused Coarse leaves no goroutine behind; the
// read after that restarts it and returns Now.
//
// The zero value is ready to use, with DefaultResolution. A Coarse must not
// be copied after first use.
type Coarse struct {
	_     noCopy
	t     atomic.Int64
	state atomic.Uint32
	// Resolution is the refresh period; zero means DefaultResolution.
	// It must not be changed after first use.
	Resolution time.Duration
}

// noCopy makes go vet's copylocks check report copies.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// Now returns the cached monotonic time in nanoseconds.
func (c *Coarse) Now() int64 {
	t := c.t.Load()
	if c.state.Load() != stateFresh {
		return c.slow()
	}
	return t
}

// slow handles a read that found the updater idle-checking, stopped or
// starting: it marks the clock as read, or starts the updater.
func (c *Coarse) slow() int64 {
	for {
		switch s := c.state.Load(); s {
		case stateFresh:
			return c.t.Load()
		case stateUnread:
			if c.state.CompareAndSwap(s, stateFresh) {
				return c.t.Load()
			}
		case stateStopped:
			if c.state.CompareAndSwap(s, stateStarting) {
				now := Now()
				c.t.Store(now)
				c.state.Store(stateFresh)
				go c.run(newTicker)
				return now
			}
		case stateStarting:
			// Another reader is between two stores; returning Now here
			// could be ahead of the value it publishes.
			runtime.Gosched()
		}
	}
}

// newTicker starts the updater's ticker with period d and returns a wait for
// its next tick and a stop. Tests replace it to see the period the updater
// asks for and to tick by hand. It is read by the reader that starts an
// updater (the slow path), which hands it to the updater.
var newTicker = func(d time.Duration) (wait, stop func()) {
	t := time.NewTicker(d)
	return func() { <-t.C }, t.Stop
}

// run refreshes the cached time every resolution until nobody reads it.
func (c *Coarse) run(ticker func(time.Duration) (wait, stop func())) {
	res := c.Resolution
	if res <= 0 {
		res = DefaultResolution
	}
	wait, stop := ticker(res)
	defer stop()
	for n := 1; ; n++ {
		wait()
		c.t.Store(Now())
		if n%idleTicks != 0 {
			continue
		}
		if c.state.CompareAndSwap(stateUnread, stateStopped) {
			return
		}
		c.state.CompareAndSwap(stateFresh, stateUnread)
	}
}
