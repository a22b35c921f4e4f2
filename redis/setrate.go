package redis

import (
	"errors"
	"math"
	"math/bits"
	"time"
)

// limitArg is a window's limit, and the same boxed once for the script's
// argument.
type limitArg struct {
	n   int64
	arg any
}

// ErrFixedRate is what SetRate returns for a GCRA Limiter: its keys hold
// their state in steps of its rate, which a change would reinterpret.
var ErrFixedRate = errors.New("redis: SetRate changes a window limiter's limit; a GCRA's rate is fixed")

// SetRate makes a window limiter admit events per period from now on: its
// limit becomes events times the window over period, rounded down, which
// must be in [1, 2^32-1] (a *limit.ParamError otherwise). The counts a key
// holds do not depend on the limit, so they carry over unchanged and each
// decision compares them with the limit in force when it is made (this
// process's: processes sharing keys may set different limits). The bound
// becomes: at most L*(ceil(T/W)+1) units in any interval of length T, L
// the largest limit used by the decisions counted in the fixed windows the
// interval meets; each fixed window counts at most the largest limit its
// decisions were made under. A GCRA Limiter returns ErrFixedRate.
func (l *Limiter) SetRate(events int64, per time.Duration) error {
	if err := l.settable(); err != nil {
		return err
	}
	switch {
	case events < 1:
		return paramError("events", events, int64(1), nil, "")
	case per < 1:
		return paramError("per", per, time.Duration(1), nil, "")
	}
	hi, lo := bits.Mul64(uint64(events), uint64(l.w))
	if hi >= uint64(per) {
		return l.limitError(events, per)
	}
	lim, _ := bits.Div64(hi, lo, uint64(per))
	if lim < 1 || lim > 1<<32-1 {
		return l.limitError(events, per)
	}
	l.lim.Store(&limitArg{n: int64(lim), arg: int64(lim)})
	return nil
}

// SetRateAt is SetRate for perSecond events a second, the shape package
// adaptive drives (an AIMD's Setter): the limit becomes perSecond times
// the window in seconds, rounded down. now is not used: the decisions take
// their time from the Redis server.
func (l *Limiter) SetRateAt(now int64, perSecond float64) error {
	if err := l.settable(); err != nil {
		return err
	}
	f := math.Floor(perSecond * float64(l.w) / 1e9)
	if !(f >= 1 && f <= 1<<32-1) {
		return paramError("perSecond", perSecond, nil, nil, "the limit, perSecond times the window, must be in [1, 2^32-1]")
	}
	l.lim.Store(&limitArg{n: int64(f), arg: int64(f)})
	return nil
}

func (l *Limiter) settable() error {
	switch {
	case l == nil || l.c == nil:
		return ErrZeroValue
	case l.alg != algWindow:
		return ErrFixedRate
	}
	return nil
}

func (l *Limiter) limitError(events int64, per time.Duration) error {
	return paramError("events", events, nil, nil,
		"the limit, events*window/per = "+"events*"+time.Duration(l.w).String()+"/"+per.String()+", must be in [1, 2^32-1]")
}
