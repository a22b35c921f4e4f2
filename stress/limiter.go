package stress

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// A Subject is a limiter under test and the bound it promises: over any
// stretch of time T it admits at most Burst + Rate*T units.
type Subject struct {
	Name string
	// New returns a fresh limiter, full, as a constructor leaves it.
	New func() limit.Limiter
	// MaxN is the largest cost it can ever admit: larger costs must fail
	// with limit.ErrCostExceedsBurst.
	MaxN int64
	// Burst and Rate (units per nanosecond) are the token-bucket arrival
	// curve that bounds what it admits.
	Burst int64
	Rate  *big.Rat
	// Extra, if set, is what the limiter documents it may admit beyond
	// Burst + Rate*T, in units (e.g. from rounding time to coarse units).
	Extra *big.Rat
	// GivenTimes marks a limiter that promises the bound over the times
	// callers pass, in whatever order they arrive: over every interval
	// [t1, t2] of given times, at most Burst + Rate*(t2-t1) units.
	GivenTimes bool
	// Window, for a limiter that counts in fixed windows, is their length:
	// a Boundary drive aims its times at their edges. Zero: the time Burst
	// takes to come back at Rate.
	Window time.Duration
	// Init and Step, when set, are the state of a fresh limiter and its
	// pure step function, for LimiterModel.
	Init any
	Step Step
}

// RatePer returns units per d as a rate in units per nanosecond.
func RatePer(units int64, d time.Duration) *big.Rat {
	return big.NewRat(units, int64(d))
}

// Drive configures one limiter run.
type Drive struct {
	Goroutines int
	// PhaseOps is the number of decisions each goroutine makes in a phase.
	PhaseOps int
	Duration time.Duration
	Seed     uint64
	// Monotone keeps the clock from moving backwards.
	Monotone bool
	// Free drops the phases: each goroutine moves a shared clock itself
	// and decides at the time it read, which is stale by the time the
	// limiter sees it, as with a real clock. The admissions are then
	// checked against the bound over given times (for a Subject with
	// GivenTimes) or over the whole run.
	Free bool
	// Boundary is Free with the times of a boundaryClock instead: clustered
	// at the edges of the subject's windows, many of them stale by a few ns
	// to a few windows.
	Boundary bool
}

// A Report says what a run did.
type Report struct {
	Phases, Decisions int
	// Admitted is the number of units admitted; Bound is Burst + Rate*T
	// over the span T from the first time to the latest.
	Admitted int64
	Bound    *big.Rat
	// Missed counts, in Monotone runs with one goroutine making one
	// decision per phase, denials of a cost that the exact bucket,
	// replayed on the same decisions, held.
	Missed int
}

const year = int64(365 * 24 * time.Hour)

// clock moves the injected time between phases: mostly forward by a few
// tokens' worth or a refill's worth, sometimes backwards, rarely years
// ahead. It stays within [0, 2^62]: past 2^62 a monotone clock stands
// still, and another jumps 2^61 ns (73 years) back.
type clock struct {
	now, fill, token int64
	monotone         bool
}

const maxTime = 1 << 62

func (c *clock) step(r *rand.Rand) {
	switch p := r.IntN(100); {
	case p < 60:
		c.now += r.Int64N(4*c.token + 1)
	case p < 80:
		c.now += r.Int64N(2*c.fill + 1)
	case p < 92 && !c.monotone:
		c.now = max(0, c.now-r.Int64N(2*c.fill+1))
	case p < 94:
		c.now += (1 + r.Int64N(30)) * year
	}
	if c.now > maxTime {
		if c.monotone {
			c.now = maxTime
		} else {
			c.now -= maxTime / 2
		}
	}
}

// Run drives s: in each phase the injected clock moves, then every
// goroutine makes PhaseOps decisions at that time with random costs
// (mostly 1, some up to MaxN, a few zero, negative or above MaxN), each
// checked against the Limiter contract. At the end the admitted units of
// every phase are replayed, in phase order, through exactBucket: a phase
// that admitted more than it held is an over-admission. With one
// goroutine, PhaseOps 1 and a Monotone clock every denial is replayed too,
// and counted in Missed when the exact bucket held enough.
func (d Drive) Run(s Subject) (Report, error) {
	r := rand.New(rand.NewPCG(d.Seed, 0))
	lim := s.New()
	tokenNS, _ := new(big.Rat).Inv(s.Rate).Float64()
	fillNS := tokenNS * float64(s.Burst)
	c := clock{now: 1e9 + r.Int64N(1e12), token: clampNS(tokenNS), fill: clampNS(fillNS), monotone: d.Monotone}
	deadline := time.Now().Add(d.Duration)
	gens := make([]*rand.Rand, d.Goroutines)
	for g := range gens {
		gens[g] = rand.New(rand.NewPCG(d.Seed, uint64(g)+1))
	}
	switch {
	case d.Boundary:
		return d.runFree(s, lim, newBoundaryClock(s, c.now).caller, gens, deadline)
	case d.Free:
		return d.runFree(s, lim, c.shared(), gens, deadline)
	}
	var phases []phase
	var rep Report
	admitted := make([]int64, d.Goroutines)
	denied := make([]int64, d.Goroutines)
	errs := make([]error, d.Goroutines)
	for len(phases) == 0 || time.Now().Before(deadline) {
		c.step(r)
		now := c.now
		var wg sync.WaitGroup
		for g := range d.Goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				admitted[g], denied[g], errs[g] = 0, -1, nil
				for range d.PhaseOps {
					n := cost(gens[g], s.MaxN)
					got, err := decide(s, lim, now, n)
					if err != nil {
						errs[g] = fmt.Errorf("%s: at now=%d n=%d: %w", s.Name, now, n, err)
						return
					}
					if got.OK {
						admitted[g] += n
					} else if n >= 0 && n <= s.MaxN {
						denied[g] = n
					}
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return rep, err
		}
		ph := phase{now: now, deniedN: -1}
		for _, a := range admitted {
			ph.admitted += a
		}
		if d.Monotone && d.Goroutines == 1 && d.PhaseOps == 1 {
			ph.deniedN = denied[0]
		}
		phases = append(phases, ph)
		rep.Admitted += ph.admitted
		rep.Decisions += d.Goroutines * d.PhaseOps
	}
	rep.Phases = len(phases)
	b := newExactBucket(s.burst(), s.Rate, phases[0].now)
	first, latest := phases[0].now, phases[0].now
	// The replay charges a stale admission at the latest time seen, as if
	// every phase had moved the limiter's clock. A denial moves nothing, so
	// with times out of order a limiter bound over the times callers pass
	// may rightly charge it earlier: for it, givenTimesBound is the contract.
	replay := d.Monotone || !s.GivenTimes
	for i, ph := range phases {
		latest = max(latest, ph.now)
		if ph.deniedN >= 0 && b.holds(ph.now, ph.deniedN) {
			rep.Missed++
		}
		if replay && !b.take(ph.now, latest, ph.admitted) {
			var recent strings.Builder
			for _, p := range phases[max(0, i-8) : i+1] {
				fmt.Fprintf(&recent, "\n  now=%d admitted=%d", p.now, p.admitted)
			}
			return rep, fmt.Errorf("%s: over-admission in phase %d at now=%d: admitted %d units, the exact bucket held %s; the last phases:%s",
				s.Name, i, ph.now, ph.admitted, b.tokens.FloatString(3), recent.String())
		}
	}
	if s.GivenTimes {
		if err := givenTimesBound(s, phases); err != nil {
			return rep, err
		}
	}
	rep.Bound = new(big.Rat).Mul(s.Rate, big.NewRat(latest-first, 1))
	rep.Bound.Add(rep.Bound, s.burst())
	return rep, nil
}

// shared returns, for each goroutine of a Free drive, a source of times
// that steps its own copy of c's parameters on one shared time and reads
// it back.
func (c clock) shared() func() func(*rand.Rand) int64 {
	var shared atomic.Int64
	shared.Store(c.now)
	return func() func(*rand.Rand) int64 {
		local := c
		return func(r *rand.Rand) int64 {
			local.now = shared.Load()
			local.step(r)
			shared.Store(local.now)
			return shared.Load()
		}
	}
}

// runFree is Run for a Free or Boundary drive: every goroutine takes times
// from its own source, made by times, and decides at each.
func (d Drive) runFree(s Subject, lim limit.Limiter, times func() func(*rand.Rand) int64, gens []*rand.Rand, deadline time.Time) (Report, error) {
	var (
		wg   sync.WaitGroup
		stop atomic.Bool
	)
	admitted := make([][]phase, d.Goroutines)
	errs := make([]error, d.Goroutines)
	for g := range d.Goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, next := gens[g], times()
			for i := 0; !stop.Load(); i++ {
				if i%64 == 0 && time.Now().After(deadline) {
					stop.Store(true)
				}
				now, n := next(r), cost(r, s.MaxN)
				got, err := decide(s, lim, now, n)
				if err != nil {
					errs[g] = fmt.Errorf("%s: at now=%d n=%d: %w", s.Name, now, n, err)
					stop.Store(true)
					return
				}
				if got.OK && n > 0 {
					admitted[g] = append(admitted[g], phase{now: now, admitted: n})
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Report{}, err
	}
	all := slices.Concat(admitted...)
	rep := Report{Phases: len(all), Decisions: len(all)}
	if len(all) == 0 {
		rep.Bound = s.burst()
		return rep, nil
	}
	first, latest := all[0].now, all[0].now
	for _, p := range all {
		rep.Admitted += p.admitted
		first, latest = min(first, p.now), max(latest, p.now)
	}
	rep.Bound = new(big.Rat).Mul(s.Rate, big.NewRat(latest-first, 1))
	rep.Bound.Add(rep.Bound, s.burst())
	if s.GivenTimes {
		return rep, givenTimesBound(s, all)
	}
	if big.NewRat(rep.Admitted, 1).Cmp(rep.Bound) > 0 {
		return rep, fmt.Errorf("%s: over-admission: %d units admitted with times spanning %dns, bound %s",
			s.Name, rep.Admitted, latest-first, rep.Bound.FloatString(3))
	}
	return rep, nil
}

// burst is Burst + Extra.
func (s Subject) burst() *big.Rat {
	b := big.NewRat(s.Burst, 1)
	if s.Extra != nil {
		b.Add(b, s.Extra)
	}
	return b
}

type phase struct{ now, admitted, deniedN int64 }

// givenTimesBound checks that over every interval [t1, t2] of the phases'
// times, sorted, the units admitted are at most Burst + Rate*(t2-t1): with
// Rate = num/den and S the running sum, den*S_j - num*t_j minus the least
// den*S_(i-1) - num*t_i over i <= j is at most den*Burst.
func givenTimesBound(s Subject, phases []phase) error {
	sorted := slices.Clone(phases)
	slices.SortStableFunc(sorted, func(a, b phase) int { return cmp.Compare(a.now, b.now) })
	num, den := s.Rate.Num(), s.Rate.Denom()
	b := s.burst()
	limit := new(big.Int).Mul(den, b.Num())
	limit.Quo(limit, b.Denom()) // floor(den*burst): sums are whole units
	var sum, least, v, t, x big.Int
	first := true
	for i := 0; i < len(sorted); {
		now := sorted[i].now
		t.SetInt64(now)
		v.Mul(den, &sum).Sub(&v, x.Mul(num, &t)) // den*S_(i-1) - num*t_i
		if first || v.Cmp(&least) < 0 {
			least.Set(&v)
			first = false
		}
		for ; i < len(sorted) && sorted[i].now == now; i++ {
			sum.Add(&sum, big.NewInt(sorted[i].admitted))
		}
		v.Mul(den, &sum).Sub(&v, x.Mul(num, &t)).Sub(&v, &least)
		if v.Cmp(limit) > 0 {
			excess := new(big.Rat).SetFrac(v.Sub(&v, limit), den)
			return fmt.Errorf("%s: over-admission in given times: an interval ending at now=%d admitted %s units more than burst + rate*length",
				s.Name, now, excess.FloatString(3))
		}
	}
	return nil
}

// decide makes one decision, through AllowAt for some unit costs, and
// checks it against the limit.Limiter contract.
func decide(s Subject, lim limit.Limiter, now, n int64) (limit.Result, error) {
	if n == 1 && now&1 == 0 {
		return limit.Result{OK: lim.AllowAt(now)}, nil
	}
	got, err := lim.AllowNAt(now, n)
	return got, checkResult(s, n, got, err)
}

func clampNS(f float64) int64 {
	if f > 1e15 {
		return 1e15
	}
	return max(1, int64(math.Ceil(f)))
}

func cost(r *rand.Rand, maxN int64) int64 {
	switch p := r.IntN(100); {
	case p < 70:
		return 1
	case p < 90:
		return r.Int64N(maxN + 1)
	case p < 94:
		return 0
	case p < 97:
		return -1 - r.Int64N(maxN)
	default:
		return maxN + 1 + r.Int64N(maxN)
	}
}

// checkResult checks one decision against the limit.Limiter contract.
func checkResult(s Subject, n int64, got limit.Result, err error) error {
	switch {
	case n < 0:
		if !errors.Is(err, limit.ErrNegativeCost) || got.OK {
			return fmt.Errorf("negative cost gave %+v, %v; want limit.ErrNegativeCost, not OK", got, err)
		}
	case n > s.MaxN:
		if !errors.Is(err, limit.ErrCostExceedsBurst) || got.OK {
			return fmt.Errorf("cost above %d gave %+v, %v; want limit.ErrCostExceedsBurst, not OK", s.MaxN, got, err)
		}
	case err != nil:
		return fmt.Errorf("unexpected error %v", err)
	case got.Remaining < 0:
		return fmt.Errorf("negative Remaining in %+v", got)
	case got.OK && got.RetryAfter != 0:
		return fmt.Errorf("admitted with RetryAfter %d", got.RetryAfter)
	case !got.OK && got.RetryAfter <= 0:
		return fmt.Errorf("denied with RetryAfter %d", got.RetryAfter)
	}
	return nil
}

// exactBucket is the reference: a token bucket in exact rationals, full at
// the start, running on an effective time that never moves backwards.
//
// A limiter fed a clock that goes backwards may rightly act on any time
// between the one it is given and the latest the clock has shown: it may
// have recorded that latest time, or not. The reference therefore accepts
// a phase when some effective time in that range, no earlier than its
// last one, gives the bucket enough tokens, and moves its time only as far
// as the phase needs (moving later only ever costs tokens at the cap). On
// a clock that never goes backwards that range is the given time itself,
// and the check is exact.
type exactBucket struct {
	burst, rate, tokens, at *big.Rat
}

func newExactBucket(burst, rate *big.Rat, start int64) *exactBucket {
	b := new(big.Rat).Set(burst)
	return &exactBucket{burst: b, rate: rate, tokens: new(big.Rat).Set(b), at: new(big.Rat).SetInt64(start)}
}

// tokensAt returns the tokens the bucket holds at time t >= b.at.
func (b *exactBucket) tokensAt(t *big.Rat) *big.Rat {
	x := new(big.Rat).Sub(t, b.at)
	x.Mul(x, b.rate).Add(x, b.tokens)
	if x.Cmp(b.burst) > 0 {
		x.Set(b.burst)
	}
	return x
}

// holds reports whether the bucket holds n units at time now, or at its
// own time if that is later.
func (b *exactBucket) holds(now, n int64) bool {
	t := maxRat(b.at, new(big.Rat).SetInt64(now))
	return b.tokensAt(t).Cmp(big.NewRat(n, 1)) >= 0
}

// take removes n units at the earliest effective time in
// [max(b.at, now), latest] at which the bucket holds them, and reports
// whether there is one; if not it leaves the bucket as it was at latest.
func (b *exactBucket) take(now, latest, n int64) bool {
	if n == 0 {
		return true
	}
	t := maxRat(b.at, new(big.Rat).SetInt64(now))
	x := b.tokensAt(t)
	need := big.NewRat(n, 1)
	if x.Cmp(need) < 0 {
		wait := new(big.Rat).Sub(need, x)
		wait.Quo(wait, b.rate)
		t.Add(t, wait)
		if t.Cmp(new(big.Rat).SetInt64(latest)) > 0 {
			b.tokens = b.tokensAt(maxRat(b.at, new(big.Rat).SetInt64(latest)))
			return false
		}
		x.Set(need)
	}
	b.tokens, b.at = x.Sub(x, need), t
	return true
}

func maxRat(x, y *big.Rat) *big.Rat {
	if x.Cmp(y) >= 0 {
		return new(big.Rat).Set(x)
	}
	return y
}
