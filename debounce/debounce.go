// Package debounce collapses a stream of calls into few runs of a function:
// on the leading edge of a burst, on its trailing edge after a quiet period,
// and at least every max wait while calls keep coming. Use it to save,
// refresh or notify once for a burst of changes. See ExampleDebouncer and
// ExampleWithEdges.
//
// # Contract
//
// A Debouncer of wait W, max wait M (0 for none) and function fn groups
// calls into bursts. A burst opens at a call when none is open and closes
// at the first time at least W after its latest call, at which no call is
// pending. A call is pending when it came after the start of fn's latest
// run in the burst (or, with no run yet, when it opened a burst without a
// leading run).
//
//   - Leading edge (WithEdges(true, _)): the call that opens a burst runs fn
//     at once, in the caller's goroutine, before Call returns.
//   - Trailing edge (the default): when a burst closes with calls pending,
//     fn runs then, in the Debouncer's timer goroutine.
//   - Max wait: while calls are pending, fn runs once M has passed since the
//     burst opened or since fn's latest run started, even if calls never stop.
//     Without a trailing edge this is the only run after the leading one.
//
// So every call is followed by a run of fn that starts after it (when the
// trailing edge is on, and unless Stop comes first), fn never runs
// concurrently with itself, and at most one run starts per burst edge or
// max wait. Calls made while fn runs (from fn itself, too) are pending for
// the next run: they get their own trailing run, no sooner than W after the
// latest of them, and only after the current run returns.
//
// # Cost
//
// A Call that does not open a burst is a compare-and-swap of the latest
// call's time (none if an earlier call was later) and a load of the state
// word, plus, when it makes calls pending (the first since a run, or
// without a trailing edge), a compare-and-swap of that word; it allocates
// nothing, takes no lock, starts no goroutine and touches no timer. The Debouncer holds one time.AfterFunc timer for its life; it is
// armed only while a burst is open, and re-armed at most once per wait,
// when it fires early (the latest call moved the burst's end) and at each run.
//
// # Panics
//
// A panic in fn leaves the Debouncer working: the run counts as done (its
// calls are no longer pending) and the burst goes on. The panic then
// reaches whoever ran fn: the caller of Call (leading edge) or of Flush,
// after the Debouncer's state is settled; in the timer's goroutine it goes
// to the WithPanicHandler function if one was given, and otherwise crashes
// the program, as a panic in any goroutine does.
//
// # Time
//
// Times are int64 nanoseconds on the Debouncer's clock (nanotime.Now unless
// WithClock gives another; nanotime.Since follows testing/synctest's fake
// time). CallAt takes the caller's now; a now before an earlier call's
// counts as that earlier time. The timer waits the difference between a
// due time and the clock's reading, so injected times must be on the same
// clock. Sums of a time and W or M saturate at math.MaxInt64: a burst whose
// end would pass the end of int64 time never closes by itself.
package debounce

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// The state word: flags in the top bits, the calls counted in the open
// burst below them (0 when no burst is open).
const (
	stopped  = 1 << 63 // Stop was called: nothing runs or opens again
	driver   = 1 << 62 // someone owns the burst: decides, runs fn, arms the timer
	running  = 1 << 61 // fn is running (set only by the driver, after checking stopped)
	kicked   = 1 << 60 // the timer fired while the driver was busy: re-decide before leaving
	countMax = 1<<60 - 1
)

// Debouncer runs a function on the edges of bursts of calls. It is safe for
// concurrent use. The zero Debouncer has no function: its methods do
// nothing, and Flush and Stop report false; make one with New. A Debouncer
// must not be copied after first use (go vet reports copies).
type Debouncer struct {
	st      atomic.Uint64 // flags and count (see the consts)
	last    atomic.Int64  // the latest call's time
	first   atomic.Int64  // when the burst opened or fn's latest run started
	covered atomic.Uint64 // the count at fn's latest run's start: calls beyond it are pending

	p       params
	fn      func()
	clock   nanotime.Clock
	onPanic func(any)
	timer   *time.Timer
}

// params is a Debouncer's fixed configuration; decide is its pure step.
type params struct {
	wait, maxWait     int64
	leading, trailing bool
}

// Option configures a Debouncer.
type Option func(*config)

type config struct {
	leading, trailing bool
	maxWait           time.Duration
	clock             nanotime.Clock
	onPanic           func(any)
}

// WithEdges chooses the edges fn runs on: leading (at the call that opens a
// burst) and trailing (when the burst ends with calls pending). The default
// is trailing only; at least one must be true.
func WithEdges(leading, trailing bool) Option {
	return func(c *config) { c.leading, c.trailing = leading, trailing }
}

// WithMaxWait makes fn run at least every d while calls are pending, so a
// steady stream of calls still runs it. d must be at least the wait; 0
// (the default) means no max wait.
func WithMaxWait(d time.Duration) Option { return func(c *config) { c.maxWait = d } }

// WithClock makes Call, Flush and the timer read clock instead of
// nanotime.Now.
func WithClock(clock nanotime.Clock) Option { return func(c *config) { c.clock = clock } }

// WithPanicHandler gives a panic of fn in the timer's goroutine to h instead
// of crashing the program. A nil h keeps that default: the program crashes.
func WithPanicHandler(h func(v any)) Option { return func(c *config) { c.onPanic = h } }

// New returns a Debouncer that runs fn after wait of quiet following a burst
// of calls (see the package doc and the options). It returns a
// *limit.ParamError for a wait below 1ns, a max wait below wait, no edge, a
// nil fn or a nil clock.
func New(wait time.Duration, fn func(), opts ...Option) (*Debouncer, error) {
	c := config{trailing: true, clock: nanotime.Now}
	for i, o := range opts {
		if o == nil {
			return nil, &limit.ParamError{Pkg: "debounce", Param: "option", Value: i, Reason: "a nil Option"}
		}
		o(&c)
	}
	switch {
	case wait < 1:
		return nil, &limit.ParamError{Pkg: "debounce", Param: "wait", Value: wait, Min: time.Duration(1)}
	case c.maxWait != 0 && c.maxWait < wait:
		return nil, &limit.ParamError{Pkg: "debounce", Param: "maxWait", Value: c.maxWait, Min: wait,
			Reason: "the max wait must be 0 (none) or at least the wait"}
	case !c.leading && !c.trailing:
		return nil, &limit.ParamError{Pkg: "debounce", Param: "edges", Value: "none",
			Reason: "at least one of the leading and trailing edges must run fn"}
	case fn == nil:
		return nil, &limit.ParamError{Pkg: "debounce", Param: "fn", Value: nil, Reason: "fn must not be nil"}
	case c.clock == nil:
		return nil, &limit.ParamError{Pkg: "debounce", Param: "clock", Value: nil, Reason: "the clock must not be nil"}
	}
	d := &Debouncer{
		p:       params{wait: int64(wait), maxWait: int64(c.maxWait), leading: c.leading, trailing: c.trailing},
		fn:      fn,
		clock:   c.clock,
		onPanic: c.onPanic,
	}
	d.timer = time.AfterFunc(time.Duration(math.MaxInt64), d.fire)
	d.timer.Stop()
	return d, nil
}

// Call is CallAt with the Debouncer's clock.
func (d *Debouncer) Call() {
	if d.fn != nil {
		d.CallAt(d.clock())
	}
}

// CallAt records a call at now. If it opens a burst and the leading edge is
// on, fn runs before CallAt returns. After Stop it does nothing.
func (d *Debouncer) CallAt(now int64) {
	if d.fn == nil {
		return // the zero Debouncer
	}
	for l := d.last.Load(); now > l && !d.last.CompareAndSwap(l, now); l = d.last.Load() {
	}
	var spin backoff.Spin
	for ; ; spin.Wait() {
		s := d.st.Load()
		switch {
		case s&stopped != 0:
			return
		case s&countMax == 0:
			if d.st.CompareAndSwap(s, 1|driver) { // s is 0: no burst, nobody drives
				d.first.Store(now)
				d.covered.Store(0)
				m := modeOpen
				if d.p.leading {
					m = modeLead
				}
				if v, ok := d.drive(now, m); ok {
					panic(v)
				}
				return
			}
		case s&countMax == countMax:
			return // 2^60 calls in one burst: the count saturates, pending stays true
		case d.p.trailing && s&running == 0 && s&countMax > d.covered.Load():
			// A trailing run is owed already and has not started: it will
			// start after this load, so after this call, and the burst
			// cannot close before it. The latest time is written above.
			return
		default:
			if d.st.CompareAndSwap(s, s+1) {
				return
			}
		}
	}
}

// Flush runs fn now, in the caller's goroutine, if calls are pending and fn
// is not running, and closes the burst (unless calls come while fn runs).
// It reports whether it ran fn. A panic in fn reaches Flush's caller after
// the Debouncer's state is settled.
func (d *Debouncer) Flush() bool {
	if d.fn == nil {
		return false
	}
	var spin backoff.Spin
	for ; ; spin.Wait() {
		s := d.st.Load()
		if s&(stopped|driver) != 0 || s&countMax <= d.covered.Load() {
			return false
		}
		if d.st.CompareAndSwap(s, s|driver) {
			break
		}
	}
	if v, ok := d.drive(d.clock(), modeFlush); ok {
		panic(v)
	}
	return true
}

// Stop makes every later call do nothing, stops the timer, and reports
// whether calls were pending (a run they were owed will not happen). No run
// of fn starts after Stop returns; a run already started finishes (Stop
// does not wait for it, so fn may call Stop).
func (d *Debouncer) Stop() bool {
	if d.fn == nil {
		return false
	}
	old := d.st.Or(stopped)
	d.timer.Stop()
	return old&stopped == 0 && old&countMax > d.covered.Load()
}

// fire is the timer's function: it takes the burst over, unless a driver
// is busy, which it then tells to decide again.
func (d *Debouncer) fire() {
	var spin backoff.Spin
	for ; ; spin.Wait() {
		s := d.st.Load()
		switch {
		case s&stopped != 0 || s&countMax == 0:
			return
		case s&driver != 0:
			if s&kicked != 0 || d.st.CompareAndSwap(s, s|kicked) {
				return
			}
		default:
			if d.st.CompareAndSwap(s, s|driver) {
				if v, ok := d.drive(d.clock(), modeTimer); ok {
					if d.onPanic == nil {
						panic(v)
					}
					d.onPanic(v)
				}
				return
			}
		}
	}
}

type mode int

const (
	modeTimer mode = iota // the timer fired
	modeOpen              // a call opened a burst, no leading edge
	modeLead              // a call opened a burst: run fn at once
	modeFlush             // Flush: run fn at once, then close the burst
)

type action int

const (
	actWait action = iota // arm the timer for the time returned
	actRun                // run fn now
	actEnd                // close the burst
)

// decide is the Debouncer's pure step: what to do at now, given when the
// burst opened or fn last started (first), the latest call (last) and
// whether calls are pending. For actWait it returns when to decide again.
func (p params) decide(first, last, now int64, pending bool) (action, int64) {
	quiet := satAdd(last, p.wait)
	if now >= quiet {
		if pending && p.trailing {
			return actRun, 0
		}
		return actEnd, 0
	}
	if pending && p.maxWait > 0 {
		mw := satAdd(first, p.maxWait)
		if now >= mw {
			return actRun, 0
		}
		return actWait, min(quiet, mw)
	}
	return actWait, quiet
}

func satAdd(t, d int64) int64 {
	if t > math.MaxInt64-d {
		return math.MaxInt64
	}
	return t + d
}

// drive runs the burst while the caller holds the driver bit: it decides,
// runs fn, arms the timer or closes the burst, and gives the bit up. It
// returns a panic of fn, after the state is settled.
func (d *Debouncer) drive(now int64, m mode) (pv any, panicked bool) {
	var spin backoff.Spin
	for {
		s := d.st.Load()
		if s&stopped != 0 {
			d.st.And(^uint64(driver | kicked))
			return pv, panicked
		}
		cnt := s & countMax
		pending := cnt > d.covered.Load()
		act, at := d.p.decide(d.first.Load(), d.last.Load(), now, pending)
		switch {
		case m == modeLead, m == modeFlush && pending:
			act = actRun
		case m == modeFlush:
			act = actEnd
		}
		if act == actRun && panicked {
			act, at = actWait, now // the timer runs it, after this panic has been seen
		}
		switch act {
		case actEnd:
			if d.st.CompareAndSwap(s, 0) {
				return pv, panicked
			}
		case actWait:
			d.timer.Reset(until(now, at)) // at > now except after a panic (then 0)
			if armedHook != nil {
				armedHook()
			}
			if d.st.CompareAndSwap(s, s&^kicked&^driver) {
				return pv, panicked
			}
			// New calls or a kick: decide again.
		case actRun:
			if !d.st.CompareAndSwap(s, s|running) {
				break // new calls or Stop: decide again
			}
			d.covered.Store(cnt)
			d.first.Store(now)
			if m != modeFlush {
				m = modeTimer
			}
			pv, panicked = d.run()
			d.st.And(^uint64(running))
			if m == modeFlush {
				m = modeTimer
				if s := d.st.Load(); s&countMax == cnt && s&stopped == 0 {
					m = modeFlush // nothing came during the run: close the burst
				}
			}
			now = d.clock()
			continue
		}
		spin.Wait()
		now = d.clock()
	}
}

// armedHook, if set (by tests), runs between arming the timer and giving
// up the driver bit: the window in which the timer may fire and find the
// driver busy.
var armedHook func()

// run calls fn and returns its panic, if any. If fn ends its goroutine
// (runtime.Goexit, as t.FailNow does), the burst is handed to the timer.
func (d *Debouncer) run() (pv any, panicked bool) {
	returned := false
	defer func() {
		if returned {
			return
		}
		pv, panicked = recover(), true
		if pv == nil { // Goexit: nothing more runs in this goroutine
			d.st.And(^uint64(running | driver | kicked))
			d.timer.Reset(0)
		}
	}()
	d.fn()
	returned = true
	return nil, false
}

// until is the timer's duration from now to at (>= now), saturated.
func until(now, at int64) time.Duration {
	if now < 0 && at > math.MaxInt64+now {
		return math.MaxInt64
	}
	return time.Duration(at - now)
}
