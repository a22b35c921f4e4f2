package redis

import (
	"math"
	"math/bits"
	"time"

	"github.com/cellrate/cellrate/internal/ratio"
)

// limitArg is a window's limit, and the same boxed once for the script's
// argument.
type limitArg struct {
	n   int64
	arg any
}

// SetRate makes the limiter admit events per period from now on.
//
// A window limiter's limit becomes events times the window over period,
// rounded down, which must be in [1, 2^32-1] (a *limit.ParamError
// otherwise). The counts a key holds do not depend on the limit, so they
// carry over unchanged and each decision compares them with the limit in
// force when it is made (this process's: processes sharing keys may set
// different limits). The bound becomes: at most L*(ceil(T/W)+1) units in
// any interval of length T, L the largest limit used by the decisions
// counted in the fixed windows the interval meets; each fixed window
// counts at most the largest limit its decisions were made under.
//
// A GCRA limiter keeps its burst; events, period and burst must be what
// NewGCRA accepts. Each key records the rate it was written at, and the
// first decision on a key under another rate (this process's after a
// SetRate, or another process's) converts it at that decision's time: the
// events the key owed then at its old rate (rounded up to whole events)
// are owed from then on at the new one. So for each key the bound
// becomes: at most burst plus the integral, over the interval, of the
// rate in force on the key (each rate from the decision that converted
// the key to it), so at most burst + r*t in an interval of length t, r the
// largest of those rates. Two decisions (of n > 0) whose time is behind
// the key's are denied and write nothing: one under another rate, before
// the key's latest write (its RetryAfter is the time to that write, after
// which it is decided at the new rate), and one before the key's last
// conversion (its RetryAfter is exact). Keys written by versions that did
// not record their rate are read as the reader's rate, and such a version
// reads any key as its own rate: change a GCRA's rate only once every
// process sharing its keys runs this one. Each rate is a parameter set of
// its own, so a library on the server (see the package doc): round the
// rates an AIMD sets to a few distinct values.
func (l *Limiter) SetRate(events int64, period time.Duration) error {
	if l == nil || l.c == nil {
		return errZeroValue
	}
	if l.alg == algGCRA {
		return l.setGCRA(events, period)
	}
	switch {
	case events < 1:
		return paramError("events", events, int64(1), nil, "")
	case period < 1:
		return paramError("period", period, time.Duration(1), nil, "")
	}
	hi, lo := bits.Mul64(uint64(events), uint64(l.w))
	if hi >= uint64(period) {
		return l.limitError(events, period)
	}
	lim, _ := bits.Div64(hi, lo, uint64(period))
	if lim < 1 || lim > 1<<32-1 {
		return l.limitError(events, period)
	}
	l.lim.Store(&limitArg{n: int64(lim), arg: int64(lim)})
	return nil
}

// setGCRA loads a GCRA's program for its new rate. Decisions in flight
// use the program they loaded: each is exact under its own rate.
func (l *Limiter) setGCRA(events int64, period time.Duration) error {
	gp, err := newGCRAParams(events, period, l.max)
	if err != nil {
		return err
	}
	l.prog.Store(gcraProgram(gp, graceMs(l.cfg.grace)))
	return nil
}

// SetRateAt is SetRate for perSecond events a second, the shape package
// adaptive drives (an AIMD's Setter). A window's limit becomes perSecond
// times the window in seconds, rounded down; a GCRA's rate is perSecond
// read as the nearest fraction num/den with den <= 2^32 (as
// bucket.NewRate reads a float), refused with a *limit.ParamError where
// SetRate would refuse num per den seconds. now is not used: the decisions
// take their time from the Redis server.
func (l *Limiter) SetRateAt(now int64, perSecond float64) error {
	if l == nil || l.c == nil {
		return errZeroValue
	}
	if l.alg == algGCRA {
		num, den, ok := ratio.Fraction(perSecond)
		if !ok || den > 1<<32 || num > 1<<62 {
			return paramError("perSecond", perSecond, nil, nil, "not a finite rate in range")
		}
		return l.setGCRA(int64(num), time.Duration(den)*time.Second)
	}
	f := math.Floor(perSecond * float64(l.w) / 1e9)
	if !(f >= 1 && f <= 1<<32-1) {
		return paramError("perSecond", perSecond, nil, nil, "the limit, perSecond times the window, must be in [1, 2^32-1]")
	}
	l.lim.Store(&limitArg{n: int64(f), arg: int64(f)})
	return nil
}

func (l *Limiter) limitError(events int64, period time.Duration) error {
	return paramError("events", events, nil, nil,
		"the limit, events*window/period = "+"events*"+time.Duration(l.w).String()+"/"+period.String()+", must be in [1, 2^32-1]")
}
