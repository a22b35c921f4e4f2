// Package coalesce lets concurrent callers of the same key share one
// execution of a function and its result. Use it in front of a cache miss or
// a backend call that many callers make at once, like
// golang.org/x/sync/singleflight, with contexts, typed results, an optional
// delay that gathers a burst, and panics that reach every caller. See
// ExampleGroup.
//
// # Contract
//
// A Group runs fn(key) for the first caller of Do with that key (the
// leader), in the leader's goroutine. Every caller of Do with the same key
// from then until fn returns (the joiners) gets the same result, without
// running fn: per key, at most one execution is in flight, and it runs at
// most once for all the callers it serves. A caller after fn returned starts
// a new execution (results are not cached). Joiners share the value itself:
// a pointer or a slice in V is shared too.
//
// With WithDelay(d), the leader waits d before running fn, so callers that
// arrive within d of the first share its run (the coalescing of a burst);
// Flush ends every such wait at once. Without it, fn starts at once.
//
// # Contexts
//
// A joiner whose ctx ends stops waiting and returns ctx.Err(); the
// execution goes on for the others. A leader whose ctx ends during the
// delay returns ctx.Err() and drops the execution if nobody joined it;
// otherwise it runs fn for the joiners and returns the result. fn itself
// takes no context: it must not depend on the leader's.
//
// # Stop and Flush
//
// Stop makes every later Do return ErrStopped, ends the waits of delayed
// executions (they run now, for the callers they already serve) and waits
// until every execution in flight has returned. Flush ends the waits
// without stopping.
//
// # Panics
//
// If fn panics, the execution ends: every caller it serves (the leader and
// each joiner still waiting) panics in its own goroutine with the same
// *PanicError, which holds the value and fn's stack; the key is released
// first, so the next Do starts a new execution. If fn calls runtime.Goexit,
// the leader's goroutine ends and the joiners get ErrGoexit.
//
// # Cost
//
// No goroutine per call: the leader runs fn, the joiners block on a channel
// the leader closes. A joiner allocates nothing; a leader allocates its
// execution's record and channel, and with a delay one timer, stopped on
// every path. The map of keys in flight is under one mutex, held only to
// look a key up, add it or remove it, never while fn runs.
//
// coalesce makes no time-dependent decision of its own (the delay is a
// timer), so unlike cellrate's limiters it has no clock option and no ...At
// methods; testing/synctest's fake time drives its timer.
package coalesce

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// ErrStopped is returned by Do after Stop.
var ErrStopped = errors.New("coalesce: the group is stopped")

// errZeroGroup is what the zero Group's Do returns: it is ErrStopped.
var errZeroGroup = fmt.Errorf("coalesce: the zero Group has no fn (make one with New): %w", ErrStopped)

// ErrGoexit is returned to the joiners of an execution whose fn called
// runtime.Goexit.
var ErrGoexit = errors.New("coalesce: fn called runtime.Goexit")

// PanicError is what the callers of an execution panic with when fn
// panicked.
type PanicError struct {
	Value any    // what fn panicked with
	Stack []byte // fn's stack at the panic
}

func (p *PanicError) Error() string {
	return fmt.Sprintf("coalesce: fn panicked: %v\n\n%s", p.Value, p.Stack)
}

// Unwrap returns the panic value if it is an error.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// Group coalesces calls of fn by key. It is safe for concurrent use. The
// zero Group has no fn and is as if stopped: Do returns an error that
// errors.Is ErrStopped, and Flush and Stop do nothing; make one with New.
// A Group must not be copied after first use (go vet reports copies).
type Group[K comparable, V any] struct {
	fn    func(K) (V, error)
	delay time.Duration

	mu      sync.Mutex
	calls   map[K]*call[V]
	stopped bool
	now     chan struct{} // closed by Flush or Stop: delayed executions run now
	flight  sync.WaitGroup
}

// call is one execution.
type call[V any] struct {
	done  chan struct{} // closed when the result is set
	v     V
	err   error
	pe    *PanicError
	joins int // joiners, under the Group's mutex
}

// Option configures a Group.
type Option func(*config)

type config struct{ delay time.Duration }

// WithDelay makes the leader wait d before running fn, so callers that come
// meanwhile share the execution. d >= 0; 0 (the default) runs fn at once.
func WithDelay(d time.Duration) Option { return func(c *config) { c.delay = d } }

// New returns a Group that runs fn. It returns a *limit.ParamError for a nil
// fn or a negative delay.
func New[K comparable, V any](fn func(K) (V, error), opts ...Option) (*Group[K, V], error) {
	var c config
	for i, o := range opts {
		if o == nil {
			return nil, &limit.ParamError{Pkg: "coalesce", Param: "option", Value: i, Reason: "a nil Option"}
		}
		o(&c)
	}
	switch {
	case fn == nil:
		return nil, &limit.ParamError{Pkg: "coalesce", Param: "fn", Value: nil, Reason: "fn must not be nil"}
	case c.delay < 0:
		return nil, &limit.ParamError{Pkg: "coalesce", Param: "delay", Value: c.delay, Min: time.Duration(0)}
	}
	return &Group[K, V]{fn: fn, delay: c.delay, calls: make(map[K]*call[V]), now: make(chan struct{})}, nil
}

// Do returns the result of fn(key), from an execution it starts or joins
// (see the package doc).
func (g *Group[K, V]) Do(ctx context.Context, key K) (v V, err error) {
	g.mu.Lock()
	switch {
	case g.fn == nil:
		g.mu.Unlock()
		return v, errZeroGroup
	case g.stopped:
		g.mu.Unlock()
		return v, ErrStopped
	}
	if c, ok := g.calls[key]; ok {
		c.joins++
		g.mu.Unlock()
		select {
		case <-c.done:
			if c.pe != nil {
				panic(c.pe)
			}
			return c.v, c.err
		case <-ctx.Done():
			g.mu.Lock()
			c.joins--
			g.mu.Unlock()
			return v, ctx.Err()
		}
	}
	c := &call[V]{done: make(chan struct{})}
	g.calls[key] = c
	g.flight.Add(1)
	now := g.now
	g.mu.Unlock()
	defer g.flight.Done()

	if g.delay > 0 && !g.wait(ctx, key, c, now) {
		return v, ctx.Err()
	}
	g.run(key, c)
	if c.pe != nil {
		panic(c.pe)
	}
	return c.v, c.err
}

// wait is the leader's delay. It returns false if the leader's ctx ended
// with nobody joined: the execution is then dropped.
func (g *Group[K, V]) wait(ctx context.Context, key K, c *call[V], now chan struct{}) bool {
	t := time.NewTimer(g.delay)
	defer t.Stop()
	for done := ctx.Done(); ; {
		select {
		case <-t.C:
			return true
		case <-now:
			return true
		case <-done:
			g.mu.Lock()
			if c.joins == 0 {
				delete(g.calls, key)
				close(c.done) // nobody waits on it; closed for tidiness
				g.mu.Unlock()
				return false
			}
			g.mu.Unlock()
			done = nil // serve the joiners
		}
	}
}

// run executes fn for c, releases the key and publishes the result, also
// when fn panics or ends its goroutine.
func (g *Group[K, V]) run(key K, c *call[V]) {
	returned := false
	defer func() {
		if !returned {
			if p := recover(); p != nil {
				c.pe = &PanicError{Value: p, Stack: debug.Stack()}
			} else {
				c.err = ErrGoexit
			}
		}
		g.mu.Lock()
		delete(g.calls, key)
		g.mu.Unlock()
		close(c.done)
	}()
	c.v, c.err = g.fn(key)
	returned = true
}

// Waiting returns how many callers wait on the execution of key in flight
// beside its leader (0 when none is in flight).
func (g *Group[K, V]) Waiting(key K) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c, ok := g.calls[key]; ok {
		return c.joins
	}
	return 0
}

// Flush ends the delay of every execution waiting for it: they run now.
func (g *Group[K, V]) Flush() {
	g.mu.Lock()
	if !g.stopped && g.now != nil {
		close(g.now)
		g.now = make(chan struct{})
	}
	g.mu.Unlock()
}

// Stop makes later calls of Do return ErrStopped, runs the delayed
// executions now, and waits until every execution in flight has returned.
// It must not be called from fn. Stopping twice is harmless.
func (g *Group[K, V]) Stop() {
	g.mu.Lock()
	if !g.stopped && g.now != nil {
		close(g.now)
	}
	g.stopped = true
	g.mu.Unlock()
	g.flight.Wait()
}
