package redis

import (
	"math/big"
	"math/bits"
	"time"

	"github.com/cellrate/cellrate/internal/ratio"
)

// SetRate makes the limiter admit events per period from now on, keeping
// its burst and its Redis burst. events and period must be what
// NewTwoTier accepts, and the rate may refill at most burst less the Redis
// burst in 1ms (a *limit.ParamError otherwise). Setting the rate in force
// does nothing.
//
// The change reaches the shared key with this process's next borrow of
// it, which converts the key as Limiter.SetRate's decisions do: the events
// it owes carry over to the new rate. Units this process holds are spent
// at most at the rate they were borrowed under: a faster rate shortens the
// lease, for new borrows and in the same ratio for the units held, so that
// what the rate refills in a lease stays at most burst less the Redis
// burst; units reserved and not yet there are void (Redis counted them:
// they are lost). The bound is then Limiter.SetRate's: for each key, at
// most burst plus the integral of the rate in force on the key over any
// interval (each rate from the decision that converted the key to it),
// when every process sharing the key sets the same rates. A process whose
// rate is below the key's sees the key refill faster than its leases
// assume: up to (r/r' - 1)*(burst - Redis burst) more per lease, r the
// key's rate and r' its own. Decisions made while SetRate runs may use
// either rate.
func (t *TwoTier) SetRate(events int64, period time.Duration) error {
	if t == nil || t.r == nil {
		return errZeroValue
	}
	t.setting.Lock()
	defer t.setting.Unlock()
	old := t.rate.Load()
	if old.events == events && old.period == period {
		return nil
	}
	rt, err := t.newRate(events, period)
	if err != nil {
		return err
	}
	t.rate.Store(rt)
	t.r.prog.Store(rt.prog)
	now := monotonic()
	t.entries.Range(func(_, v any) bool {
		e := v.(*entry)
		e.shorten(old, rt, now)
		if fb := e.fb.Load(); fb != nil {
			t.follow(fb, rt, now) // rt was accepted: its share is a rate gcra takes
		}
		return true
	})
	return nil
}

// SetRateAt is SetRate for perSecond events a second, the shape package
// adaptive drives (an AIMD's Setter), read as Limiter.SetRateAt reads it.
// now is not used: the rate changes when SetRateAt runs.
func (t *TwoTier) SetRateAt(now int64, perSecond float64) error {
	if t == nil || t.r == nil {
		return errZeroValue
	}
	// ok: den <= 2^32 (den seconds fit a Duration), num < 2^62.
	num, den, ok := ratio.Fraction(perSecond)
	if !ok {
		return paramError("perSecond", perSecond, nil, nil, "not a finite rate in range")
	}
	return t.SetRate(int64(num), time.Duration(den)*time.Second)
}

// newRate returns events per period as a TwoTier's rate: the Redis
// limiter's program for it, and the longest lease, at most maxLease, in
// which it refills at most keep units: floor(keep*period/events).
func (t *TwoTier) newRate(events int64, period time.Duration) (*tierRate, error) {
	gp, err := newGCRAParams(events, period, t.r.max)
	if err != nil {
		return nil, err
	}
	l := new(big.Int).Mul(big.NewInt(t.keep), big.NewInt(int64(period)))
	l.Quo(l, big.NewInt(events))
	lease := t.maxLease
	if l.IsInt64() {
		lease = min(lease, l.Int64())
	}
	if lease < int64(time.Millisecond) {
		return nil, paramError("events", events, nil, nil,
			"the rate refills more than burst less the Redis burst ("+big.NewInt(t.keep).String()+") in 1ms")
	}
	rt := &tierRate{events: events, period: period, lease: lease, prog: gcraProgram(gp, graceMs(t.r.cfg.grace))}
	rt.half = max(1, rt.units(lease/2))
	return rt, nil
}

// shorten cuts the time left to the units in e's pool after the rate went
// from old to rt at now, if it rose: by old's rate over rt's, rounded
// down, so that what the key refills while they are spent stays within
// what old refills in a lease.
func (e *entry) shorten(old, rt *tierRate, now int64) {
	// rt faster than old: rt.events*old.period > old.events*rt.period.
	f := new(big.Int).Mul(big.NewInt(old.events), big.NewInt(int64(rt.period)))
	g := new(big.Int).Mul(big.NewInt(rt.events), big.NewInt(int64(old.period)))
	if f.Cmp(g) >= 0 {
		return
	}
	// The ratio f/g in (0, 1) as a fraction of 2^32, rounded down.
	q := f.Lsh(f, 32).Quo(f, g).Uint64()
	for {
		w := e.word.Load()
		dl := int64(w>>tokBits) * 1e6
		if w&tokMask == 0 || dl <= now {
			return
		}
		hi, lo := bits.Mul64(uint64(dl-now), q)
		left := int64(hi<<32 | lo>>32)
		ndl := uint64((now + left) / 1e6)
		if ndl >= w>>tokBits || e.word.CompareAndSwap(w, ndl<<tokBits|w&tokMask) {
			return
		}
	}
}
