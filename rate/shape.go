package rate

import (
	"errors"
	"math"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/internal/bucketcore"
	"github.com/cellrate/cellrate/limit"
)

// kind is how a shape decides.
type kind uint8

const (
	closed   kind = iota // burst <= 0 at a finite Limit: only n = 0
	finite               // a bucket
	frozen               // a zero Limit: a pool of whole tokens
	infinite             // Inf: everything
)

// shape is one immutable setting of a Limiter: its Limit and burst as
// given, and what decides under them. A setter replaces the shape; a
// decision loads it once.
type shape struct {
	limit Limit
	burst int
	base  time.Time // bucket time 0, kept by every shape of a Limiter
	kind  kind

	// finite: the bucket, which runs on base's time less off (off is set
	// when a bucket resumes after a zero Limit, so that the paused time
	// refills nothing).
	b   *bucketcore.Limiter
	off int64

	// frozen: the whole tokens; the bucket they were taken from at phi
	// (nil when there was none), holding the fraction or the debt, and the
	// loan to give them back to it; resume closes when the shape is
	// replaced.
	pool   *pool
	paused *bucketcore.Limiter
	loan   bucketcore.Loan
	phi    int64
	debt   bool
	resume chan struct{}
}

// zeroShape is the zero Limiter's: Limit 0, burst 0.
var zeroShape = shape{}

// at maps t to the bucket's time: t.Sub(base) - off, saturating.
func (s *shape) at(t time.Time) int64 { return satSub(int64(t.Sub(s.base)), s.off) }

// since is at(time.Now()), read as time.Since, which follows synctest.
func (s *shape) since() int64 { return satSub(int64(time.Since(s.base)), s.off) }

func satSub(a, b int64) int64 {
	d := a - b
	if (b > 0 && d > a) || (b < 0 && d < a) {
		if b > 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return d
}

// take takes n whole tokens from a frozen shape's pool. open is false once
// a setter has closed the pool: reload the shape.
func (s *shape) take(n int) (ok, open bool) {
	if n < 0 || n > s.burst {
		return false, true
	}
	if n == 0 {
		return !s.debt, s.pool.n.Load() >= 0
	}
	return s.pool.take(int64(n))
}

// fill puts n whole tokens in a new frozen shape's pool, capped at the
// burst. At the cap the paused fraction is dropped too (it would make the
// tokens more than the burst): the pool then stands alone, and a later
// positive limit starts a new bucket from it.
func (s *shape) fill(n int64) {
	if n >= int64(s.burst) {
		n = int64(s.burst)
		s.paused, s.loan = nil, bucketcore.Loan{}
	}
	s.pool.n.Store(n)
}

// pool is a count of whole tokens that never refills; a negative count
// marks it closed.
type pool struct{ n atomic.Int64 }

func (p *pool) take(n int64) (ok, open bool) {
	for {
		v := p.n.Load()
		switch {
		case v < 0:
			return false, false
		case v < n:
			return false, true
		case p.n.CompareAndSwap(v, v-n):
			return true, true
		}
	}
}

// put gives n tokens back unless the pool is closed.
func (p *pool) put(n int64) {
	for {
		v := p.n.Load()
		if v < 0 || p.n.CompareAndSwap(v, v+n) {
			return
		}
	}
}

// close closes the pool and returns the tokens it held.
func (p *pool) close() int64 { return max(p.n.Swap(-1), 0) }

// kindOf says how a Limit and burst decide, and for a finite one the
// bucket's Params: the burst clamped to what the bucket holds at r.
func kindOf(r Limit, b int) (kind, bucketcore.Params) {
	switch {
	case r >= Inf:
		return infinite, bucketcore.Params{}
	case !(r > 0):
		if b <= 0 {
			return closed, bucketcore.Params{}
		}
		return frozen, bucketcore.Params{}
	case b <= 0:
		return closed, bucketcore.Params{}
	}
	ps, ok := params(float64(r), int64(b))
	if !ok {
		return frozen, bucketcore.Params{} // too slow to hold one token: read as 0
	}
	return finite, ps
}

// params returns the bucket's Params for r tokens per second and burst b,
// the burst clamped to the largest that fits; ok is false when not even a
// burst of 1 fits. A float that is Every(d) for a whole d is read as one
// token per d; any other as bucketcore.RateParams reads it; one beyond its range
// as whole tokens per ns, rounded down.
func params(r float64, b int64) (bucketcore.Params, bool) {
	var mk func(b int64) (bucketcore.Params, error)
	d := math.Round(1e9 / r)
	switch {
	case d >= 1 && d < 0x1p63 && Every(time.Duration(d)) == Limit(r):
		// Every(d)'s float: one token per d exactly.
		mk = func(b int64) (bucketcore.Params, error) { return bucketcore.NewParams(1, time.Duration(d), b) }
	case r >= 0x1p62:
		// Beyond RateParams' range: whole tokens per ns, rounded down.
		perNS := int64(math.MaxInt64)
		if r/1e9 < 0x1p63 {
			perNS = int64(r / 1e9)
		}
		mk = func(b int64) (bucketcore.Params, error) { return bucketcore.NewParams(perNS, time.Nanosecond, b) }
	default:
		mk = func(b int64) (bucketcore.Params, error) { return bucketcore.RateParams(r, b) }
	}
	ps, err := mk(b)
	var pe *limit.ParamError
	if err != nil && errors.As(err, &pe) && pe.Param == "burst" {
		if m, _ := pe.Max.(int64); m >= 1 {
			ps, err = mk(m)
		}
	}
	return ps, err == nil
}

// build returns a new shape for r and b with no state carried over: a full
// bucket, or a full pool. Its bucket's time is base's.
func build(r Limit, b int, base time.Time) *shape {
	k, ps := kindOf(r, b)
	s := &shape{limit: r, burst: b, base: base, kind: k}
	switch k {
	case finite:
		s.b, _ = bucketcore.NewFromParams(ps)
	case frozen:
		s.pool = new(pool)
		s.pool.n.Store(int64(b))
		s.resume = make(chan struct{})
	}
	return s
}

// set replaces the shape old by one for r and b from t on, carrying the
// tokens over (the package doc says how for each kind). The caller holds
// l.mu.
func (l *Limiter) set(t time.Time, old *shape, r Limit, b int) {
	base := old.base
	if l.cur.Load() == nil {
		base = time.Now()
	}
	k, ps := kindOf(r, b)
	t0 := int64(t.Sub(base)) // base's time at t, before any offset
	var s *shape
	switch old.kind {
	case finite:
		now := old.at(t)
		switch k {
		case finite:
			if ps != old.b.Params() {
				_ = old.b.SetParamsAt(now, ps) // ps is valid
			}
			s = &shape{limit: r, burst: b, base: base, kind: finite, b: old.b, off: old.off}
		case frozen:
			// The whole tokens at now go into the pool, the fraction (or
			// the debt) stays in the bucket, paused at now.
			loan := old.b.TakeUpToAt(now, math.MaxInt64)
			debt, _ := old.b.AllowNAt(now, 0)
			s = &shape{limit: r, burst: b, base: base, kind: frozen, pool: new(pool),
				paused: old.b, loan: loan, phi: now, debt: !debt.OK, resume: make(chan struct{})}
			s.fill(loan.N)
		}
	case frozen:
		n := old.pool.close()
		switch k {
		case finite:
			if old.paused == nil {
				// A full bucket less what the pool does not hold.
				nb, _ := bucketcore.NewFromParams(ps)
				if n < ps.Burst() {
					nb.TakeUpToAt(t0, ps.Burst()-n)
				}
				s = &shape{limit: r, burst: b, base: base, kind: finite, b: nb}
				break
			}
			// Resume the paused bucket where it stopped: the pool's tokens
			// back into it (exact while nothing else touched it), its time
			// phi at t.
			old.paused.GiveBack(&old.loan, n)
			if ps != old.paused.Params() {
				_ = old.paused.SetParamsAt(old.phi, ps)
			}
			s = &shape{limit: r, burst: b, base: base, kind: finite, b: old.paused, off: satSub(t0, old.phi)}
		case frozen:
			s = &shape{limit: r, burst: b, base: base, kind: frozen, pool: new(pool),
				paused: old.paused, loan: old.loan, phi: old.phi, debt: old.debt, resume: make(chan struct{})}
			s.fill(n)
		}
		// Waiters on the old pool retry under the new shape.
		defer close(old.resume)
	case closed:
		switch k {
		case finite:
			// Empty at t.
			nb, _ := bucketcore.NewFromParams(ps)
			nb.TakeUpToAt(t0, ps.Burst())
			s = &shape{limit: r, burst: b, base: base, kind: finite, b: nb}
		case frozen:
			s = &shape{limit: r, burst: b, base: base, kind: frozen, pool: new(pool), resume: make(chan struct{})}
		}
	}
	if s == nil {
		// Into Inf or a closed shape, and out of Inf: nothing carries over
		// (leaving Inf, the bucket or pool is full).
		s = build(r, b, base)
	}
	l.cur.Store(s)
}
