package adaptive

import (
	"errors"
	"math"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
	"github.com/cellrate/cellrate/striped"
)

// ErrZeroAIMD is what Err returns for an AIMD not made by NewAIMD.
var ErrZeroAIMD = errors.New("adaptive: zero AIMD; make one with NewAIMD")

// AIMD moves a limiter's rate with the health of what it protects:
// additive increase after good intervals, multiplicative decrease after
// bad ones, as TCP does. Callers record each request's outcome (RecordAt)
// or latency (ObserveAt); once an interval has passed, the next record
// judges it and sets the rate on the target. It is safe for concurrent
// use; recording takes no lock (two striped counters and a load). The
// zero value counts outcomes and never sets a rate (Err returns
// ErrZeroAIMD). An AIMD must not be copied after first use.
type AIMD struct {
	_        noCopy
	target   Setter
	min, max float64
	inc, dec float64
	interval int64
	up, down int
	alpha    float64
	tol      float64
	thresh   int64
	minN     int64
	clock    nanotime.Clock

	good, bad striped.Counter
	next      atomic.Int64  // no judgement before this time
	busy      atomic.Bool   // held by the one caller judging an interval
	rate      atomic.Uint64 // float64 bits
	lastErr   atomic.Pointer[error]

	// Written only by the holder of busy.
	seenGood, seenBad int64
	ewma              float64
	ups, downs        int
	judged            bool
}

type aimdConfig struct {
	interval   time.Duration
	up, down   int
	alpha, tol float64
	thresh     time.Duration
	minN       int
}

// WithInterval sets how often an AIMD judges (1s by default): each
// judgement covers the outcomes recorded since the last one.
func WithInterval(d time.Duration) Option {
	return func(c *config) { c.interval, c.kind = d, forAIMD }
}

// WithHysteresis makes an AIMD increase only after up good intervals in a
// row and decrease only after down bad ones in a row (1 and 1 by default),
// so that one noisy interval does not move the rate.
func WithHysteresis(up, down int) Option {
	return func(c *config) { c.up, c.down, c.kind = up, down, forAIMD }
}

// WithSmoothing makes an AIMD judge an interval by an exponentially
// weighted moving average of the failure fraction, alpha being the weight
// of the newest interval (1 by default: no smoothing; in (0, 1]).
func WithSmoothing(alpha float64) Option {
	return func(c *config) { c.alpha, c.kind = alpha, forAIMD }
}

// WithTolerance makes an AIMD's interval bad only when its (smoothed)
// failure fraction exceeds f (0 by default: any failure; in [0, 1)).
func WithTolerance(f float64) Option { return func(c *config) { c.tol, c.kind = f, forAIMD } }

// WithLatencyThreshold makes an AIMD's ObserveAt count a request slower
// than d as a failure even when it succeeded (0 by default: latency is not
// judged).
func WithLatencyThreshold(d time.Duration) Option {
	return func(c *config) { c.thresh, c.kind = d, forAIMD }
}

// WithMinSamples makes an AIMD's interval with fewer than n outcomes carry
// them over to the next instead of being judged (1 by default).
func WithMinSamples(n int) Option { return func(c *config) { c.minN, c.kind = n, forAIMD } }

// NewAIMD returns an AIMD that drives target's rate (in events per second)
// within [minRate, maxRate], starting at initial, which it sets on target
// at once: increase is added after a good interval, decrease multiplies
// the rate after a bad one. It returns a *limit.ParamError for a nil
// target, rates not finite or outside 0 < minRate <= initial <= maxRate,
// increase not positive, decrease outside (0, 1), an option out of range,
// or target's error for initial.
func NewAIMD(target Setter, initial, minRate, maxRate, increase, decrease float64, opts ...Option) (*AIMD, error) {
	c := config{clock: nanotime.Now, aimdConfig: aimdConfig{interval: time.Second, up: 1, down: 1, alpha: 1, minN: 1}}
	if err := c.apply(opts, forThrottle); err != nil {
		return nil, err
	}
	if err := checkAIMD(target, initial, minRate, maxRate, increase, decrease, &c); err != nil {
		return nil, err
	}
	a := &AIMD{target: target, min: minRate, max: maxRate, inc: increase, dec: decrease,
		interval: int64(c.interval), up: c.up, down: c.down, alpha: c.alpha, tol: c.tol,
		thresh: int64(c.thresh), minN: int64(c.minN), clock: c.clock}
	now := c.clock()
	if err := target.SetRateAt(now, initial); err != nil {
		return nil, err
	}
	a.rate.Store(math.Float64bits(initial))
	a.next.Store(now + a.interval)
	return a, nil
}

func checkAIMD(target Setter, initial, minRate, maxRate, inc, dec float64, c *config) error {
	if err := checkRates(target, initial, minRate, maxRate, inc, dec); err != nil {
		return err
	}
	return c.checkAIMD()
}

func aimdErr(param string, v, lo, hi any, why string) error {
	return &limit.ParamError{Pkg: "adaptive", Param: param, Value: v, Min: lo, Max: hi, Reason: why}
}

func checkRates(target Setter, initial, minRate, maxRate, inc, dec float64) error {
	switch {
	case target == nil || isNilPointer(target):
		return aimdErr("target", nil, nil, nil, "the target must not be nil")
	case math.IsInf(maxRate, 1) || !(maxRate > 0):
		return aimdErr("maxRate", maxRate, 0.0, nil, "must be finite and positive")
	case !(minRate > 0) || minRate > maxRate:
		return aimdErr("minRate", minRate, 0.0, maxRate, "must be positive")
	case !(initial >= minRate) || initial > maxRate:
		return aimdErr("initial", initial, minRate, maxRate, "")
	case math.IsInf(inc, 1) || !(inc > 0):
		return aimdErr("increase", inc, 0.0, nil, "must be finite and positive")
	case !(dec > 0) || !(dec < 1):
		return aimdErr("decrease", dec, 0.0, 1.0, "a factor strictly between 0 and 1")
	}
	return nil
}

func (c *config) checkAIMD() error {
	switch {
	case c.interval <= 0:
		return aimdErr("interval", c.interval, time.Duration(1), nil, "")
	case c.up < 1 || c.down < 1:
		return aimdErr("hysteresis", [2]int{c.up, c.down}, 1, nil, "both counts must be at least 1")
	case !(c.alpha > 0) || c.alpha > 1:
		return aimdErr("smoothing", c.alpha, 0.0, 1.0, "")
	case !(c.tol >= 0) || !(c.tol < 1):
		return aimdErr("tolerance", c.tol, 0.0, 1.0, "")
	case c.thresh < 0:
		return aimdErr("latencyThreshold", c.thresh, time.Duration(0), nil, "")
	case c.minN < 1:
		return aimdErr("minSamples", c.minN, 1, nil, "")
	case c.clock == nil:
		return aimdErr("clock", nil, nil, nil, "the clock must not be nil")
	}
	return nil
}

// Rate returns the rate last set on the target (0 for the zero AIMD).
func (a *AIMD) Rate() float64 { return math.Float64frombits(a.rate.Load()) }

// Err returns the target's error from the last rate the AIMD set, or nil
// (ErrZeroAIMD for the zero AIMD).
func (a *AIMD) Err() error {
	if a.target == nil {
		return ErrZeroAIMD
	}
	if p := a.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Record is RecordAt with the AIMD's clock.
func (a *AIMD) Record(ok bool) {
	if a.clock != nil {
		a.RecordAt(a.clock(), ok)
	}
}

// RecordAt counts one request's outcome at now: ok for a success, false
// for a failure that means the protected side is overloaded. If an
// interval has passed since the last judgement and no other caller is
// judging, it judges it first (setting a rate on the target; a rate the
// target refuses shows in Err), and this outcome counts in the next.
func (a *AIMD) RecordAt(now int64, ok bool) {
	if now >= a.next.Load() && a.target != nil {
		a.judge(now)
	}
	if ok {
		a.good.Add(1)
	} else {
		a.bad.Add(1)
	}
}

// Observe is ObserveAt with the AIMD's clock.
func (a *AIMD) Observe(latency time.Duration, ok bool) {
	if a.clock != nil {
		a.ObserveAt(a.clock(), latency, ok)
	}
}

// ObserveAt is RecordAt with a request's latency: with a latency
// threshold (WithLatencyThreshold), a latency above it is a failure.
func (a *AIMD) ObserveAt(now int64, latency time.Duration, ok bool) {
	a.RecordAt(now, ok && (a.thresh == 0 || int64(latency) <= a.thresh))
}

// counts returns the successes and failures recorded so far.
func (a *AIMD) counts() (good, bad int64) { return a.good.Load(), a.bad.Load() }

// judge runs one judgement if due; it reports whether it set a rate.
func (a *AIMD) judge(now int64) bool {
	if now < a.next.Load() || !a.busy.CompareAndSwap(false, true) {
		return false
	}
	defer a.busy.Store(false)
	if now < a.next.Load() {
		return false // judged by another caller meanwhile
	}
	a.next.Store(now + a.interval)
	g, b := a.good.Load(), a.bad.Load()
	dg, db := g-a.seenGood, b-a.seenBad
	if dg+db < a.minN {
		return false // carried over to the next interval
	}
	a.seenGood, a.seenBad = g, b
	frac := float64(db) / float64(dg+db)
	if a.judged {
		frac = a.alpha*frac + (1-a.alpha)*a.ewma
	}
	a.ewma, a.judged = frac, true
	old := a.Rate()
	r := a.step(old, frac > a.tol)
	if r == old {
		return false
	}
	err := a.target.SetRateAt(now, r)
	a.lastErr.Store(&err)
	if err == nil {
		a.rate.Store(math.Float64bits(r))
	}
	return true
}

// step counts a good or bad interval and returns the rate after it.
func (a *AIMD) step(r float64, bad bool) float64 {
	if bad {
		a.ups = 0
		if a.downs++; a.downs < a.down {
			return r
		}
		a.downs = 0
		return max(a.min, r*a.dec)
	}
	a.downs = 0
	if a.ups++; a.ups < a.up {
		return r
	}
	a.ups = 0
	return min(a.max, r+a.inc)
}

// noCopy makes go vet's copylocks check report copies of an AIMD.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// isNilPointer reports whether target holds a nil pointer (a nil
// *gcra.Limiter), which would panic at the first rate set on it.
func isNilPointer(target Setter) bool {
	v := reflect.ValueOf(target)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
