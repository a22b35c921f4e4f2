package packed64core

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/internal/limittest"
	"github.com/cellrate/cellrate/limit"
)

func TestBucketParamsValidate(t *testing.T) {
	for _, c := range []struct {
		rate     int64
		per      time.Duration
		burst    int64
		param    string
		value    any
		min, max any
	}{
		{1, 0, 1, "period", time.Duration(0), time.Duration(256), nil},
		{3, 255, 1, "period", time.Duration(255), time.Duration(768), nil},
		{0, time.Second, 1, "events", int64(0), int64(1), int64(3906250)},
		{3906251, time.Second, 1, "events", int64(3906251), int64(1), int64(3906250)},
		{1, 255, 1, "period", time.Duration(255), time.Duration(256), nil},
		{math.MaxInt64, math.MaxInt64, 1, "events", int64(math.MaxInt64), int64(1), int64(math.MaxInt64 / 256)},
		{1, time.Second, 0, "burst", int64(0), int64(1), int64(MaxBurst)},
		{1, time.Second, MaxBurst + 1, "burst", int64(MaxBurst + 1), int64(1), int64(MaxBurst)},
	} {
		_, err := NewBucketParams(c.rate, c.per, c.burst)
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Pkg != "packed64" || pe.Param != c.param || pe.Value != c.value || pe.Min != c.min || pe.Max != c.max {
			t.Errorf("NewBucketParams(%d, %v, %d) error %#v, want %s %v in [%v, %v]", c.rate, c.per, c.burst, pe, c.param, c.value, c.min, c.max)
		}
		if _, err2 := NewBucket(c.rate, c.per, c.burst); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("NewBucket: error %v, NewBucketParams %v", err2, err)
		}
	}
	var pe *limit.ParamError
	if _, err := NewBucket(1, time.Second, 1, WithClock(nil)); !errors.As(err, &pe) || pe.Param != "clock" {
		t.Errorf("WithClock(nil): error %v", err)
	}
	for _, c := range []struct {
		rate  int64
		per   time.Duration
		burst int64
	}{{3906250, time.Second, MaxBurst}, {1, math.MaxInt64, MaxBurst}, {1, 256, 1}, {1, math.MaxInt64, 1}} {
		p, err := NewBucketParams(c.rate, c.per, c.burst)
		if err != nil {
			t.Fatalf("NewBucketParams(%d, %v, %d): %v", c.rate, c.per, c.burst, err)
		}
		if units := float64(c.per) / float64(c.rate) / float64(p.Unit()); units < 256 || p.cap >= 1<<bucketDeficitBits {
			t.Errorf("rate %d per %v burst %d: %.1f units per token, capacity %d", c.rate, c.per, c.burst, units, p.cap)
		}
		if p.Wrap() <= 0 || p.Slack() <= 0 || int64(p.Wrap()) < 4096*p.Slack() && p.Wrap() != math.MaxInt64 {
			t.Errorf("wrap %v slack %d", p.Wrap(), p.Slack())
		}
		if e, per := p.Rate(); e != c.rate || per != c.per || p.Burst() != c.burst {
			t.Errorf("Rate() = %d per %v, Burst() = %d", e, per, p.Burst())
		}
	}
}

func TestBucketPackRoundTrip(t *testing.T) {
	for _, s := range []bucketFields{{}, {Time: 1<<40 - 1, Deficit: 1<<24 - 1}, {Time: 1}, {Deficit: 1}, {Time: 1 << 39, Deficit: 1 << 23}} {
		if got := unpackBucket(packBucket(s)); got != s {
			t.Errorf("unpackBucket(packBucket(%+v)) = %+v", s, got)
		}
	}
}

func FuzzBucketPack(f *testing.F) {
	f.Add(uint64(0))
	f.Add(uint64(math.MaxUint64))
	f.Add(uint64(1) << 24)
	f.Fuzz(func(t *testing.T, w uint64) {
		s := unpackBucket(BucketWord(w))
		if s.Time >= 1<<bucketTimeBits || s.Deficit >= 1<<bucketDeficitBits {
			t.Fatalf("fields out of range: %+v", s)
		}
		if packBucket(s) != BucketWord(w) {
			t.Fatalf("packBucket(unpackBucket(%#x)) = %#x", w, packBucket(s))
		}
		if unpackBucket(packBucket(s)) != s {
			t.Fatalf("round trip of %+v", s)
		}
	})
}

type bucketCase struct {
	rate  int64
	per   time.Duration
	burst int64
}

func randomBucket(rng *rand.Rand) bucketCase {
	pers := []time.Duration{time.Microsecond, time.Millisecond, time.Second, time.Minute, time.Hour, 24 * time.Hour}
	per := pers[rng.IntN(len(pers))]
	maxRate := int64(per) / minTokenNs
	rates := []int64{1, 2, 3, 7, 100, maxRate, maxRate - 1, 1 + rng.Int64N(maxRate)}
	bursts := []int64{1, 2, 5, 100, MaxBurst, 1 + rng.Int64N(MaxBurst)}
	return bucketCase{
		rate:  max(1, min(maxRate, rates[rng.IntN(len(rates))])),
		per:   per,
		burst: bursts[rng.IntN(len(bursts))],
	}
}

// gap returns a random time step for a limiter whose interesting span is
// span ns: mostly small, sometimes several spans, sometimes backwards.
func gap(rng *rand.Rand, span int64, back bool) int64 {
	switch k := rng.IntN(20); {
	case k < 10:
		return rng.Int64N(span/16 + 1)
	case k < 13:
		return 0
	case k < 16:
		return rng.Int64N(2*span + 1)
	case k < 18:
		return rng.Int64N(8*span + 1)
	case back:
		return -rng.Int64N(span + 1)
	}
	return 1
}

func TestBucketStepMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	runs := 400
	if testing.Short() {
		runs = 80
	}
	for run := range runs {
		c := randomBucket(rng)
		base := rng.Int64N(1<<50) - 1<<49 // times on both sides of 0
		p, err := NewBucketParams(c.rate, c.per, c.burst)
		if err != nil {
			t.Fatal(err)
		}
		ref := newBucketRef(&p)
		span := int64(c.per) / c.rate * c.burst // a full refill
		// Keep every gap inside the wrap, so the unwrapped model applies.
		span = min(span, int64(p.Wrap())/64, 1<<50)
		var w BucketWord
		now := base + rng.Int64N(1<<40)
		high := now
		for i := range 300 {
			now += gap(rng, span, run%2 == 1)
			high = max(high, now)
			n := int64(1)
			switch rng.IntN(6) {
			case 0:
				n = 1 + rng.Int64N(c.burst)
			case 1:
				n = c.burst + 1 - rng.Int64N(3)
			}
			s := BucketState{w, high + rng.Int64N(p.Slack()+1)}
			ns, got, err := p.Step(s, now, n)
			next := ns.Word
			if err != limittest.WantErr(n, c.burst) {
				t.Fatalf("n %d: error %v", n, err)
			}
			if ns != s && (ns.Ref < now || ns.Ref < s.Ref && s.Word&deficitMask != 0) {
				t.Fatalf("run %d step %d: state %+v after %+v at %d: the new Ref is before the write", run, i, ns, s, now)
			}
			want := ref.step(now, n)
			if got != want {
				t.Fatalf("run %d step %d (rate %d per %v burst %d, unit %v, word %+v, now %d, n %d): got %+v, want %+v",
					run, i, c.rate, c.per, c.burst, p.Unit(), unpackBucket(w), now, n, got, want)
			}
			if got.OK != (next != w) && n > 0 {
				t.Fatalf("run %d step %d: OK %v but word changed %v", run, i, got.OK, next != w)
			}
			w = next
			if s := unpackBucket(w); got.OK && n > 0 && (s.Time != uint64(ref.t)&(1<<bucketTimeBits-1) || s.Deficit != ref.deficit.Uint64()) {
				t.Fatalf("run %d step %d: word %+v, reference t %d deficit %v", run, i, s, ref.t, ref.deficit)
			}
		}
	}
}

// admission is one admitted request, for bound checks.
type admission struct{ t, n int64 }

// checkBucketBound verifies that the admissions, at the times callers
// passed and in any order, take at most burst + (t2 - t1 + u)*rate/per
// tokens over every interval [t1, t2]: the exact bound within one unit.
func checkBucketBound(t *testing.T, adm []admission, p *BucketParams) {
	t.Helper()
	uses := make([]bound.Use, len(adm))
	for i, a := range adm {
		uses[i] = bound.Use{At: a.t, Cost: a.n}
	}
	if err := bound.CheckSlack(uses, p.burst, 1<<p.clk.shift, p.rate, p.per); err != nil {
		t.Fatalf("rate %d per %v, burst %d, unit %v: %v", p.rate, time.Duration(p.per), p.burst, p.Unit(), err)
	}
}

// staleTime returns the time a caller passes when the clock reads now:
// mostly now, often read up to a full refill (span) early, sometimes the
// time an earlier caller passed, delivered again.
func staleTime(rng *rand.Rand, now, span int64, adm []admission) int64 {
	switch k := rng.IntN(8); {
	case k < 2:
		return now - rng.Int64N(span+1)
	case k < 4:
		return now - rng.Int64N(span/8+1)
	case k < 5 && len(adm) > 0:
		return adm[rng.IntN(len(adm))].t
	}
	return now
}

// TestBucketBoundStaleTimes checks the bound over the times callers pass
// when they pass them stale and out of order, through Step and through the
// Bucket cell (AllowAt and AllowNAt), on clocks on both sides of 0.
func TestBucketBoundStaleTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	runs := 200
	if testing.Short() {
		runs = 40
	}
	for run := range runs {
		c := randomBucket(rng)
		base := rng.Int64N(1<<50) - 1<<49
		cell := run%2 == 1
		p, err := NewBucketParams(c.rate, c.per, c.burst)
		if err != nil {
			t.Fatal(err)
		}
		l := &Bucket{c: bucketCell{p: p}}
		span := min(int64(c.per)/c.rate*c.burst, int64(p.Wrap())/64, 1<<50)
		var (
			w   BucketWord
			adm []admission
		)
		clock := base + span + rng.Int64N(1<<40)
		high := clock
		for range 400 {
			clock += gap(rng, span, false)
			now := staleTime(rng, clock, span, adm)
			high = max(high, now)
			n := int64(1)
			if rng.IntN(3) == 0 {
				n = 1 + rng.Int64N(c.burst)
			}
			var ok bool
			switch {
			case cell && n == 1 && rng.IntN(2) == 0:
				ok = l.AllowAt(now)
			case cell:
				r, _ := l.AllowNAt(now, n)
				ok = r.OK
			default:
				next, r, _ := p.Step(BucketState{w, high + rng.Int64N(p.Slack()+1)}, now, n)
				w, ok = next.Word, r.OK
			}
			if ok {
				adm = append(adm, admission{now, n})
			}
		}
		checkBucketBound(t, adm, &p)
	}
}

// TestBucketBound runs monotone schedules, including idle gaps of many wrap
// periods, and checks the bound over every run of admissions. It also
// measures how much an exact rational token bucket admits from the same
// requests.
func TestBucketBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	runs := 60
	if testing.Short() {
		runs = 15
	}
	worst, worstWrapped := 1.0, 1.0
	for range runs {
		wrapped := false
		c := randomBucket(rng)
		p, _ := NewBucketParams(c.rate, c.per, c.burst)
		tok := int64(c.per) / c.rate
		var (
			w          BucketWord
			adm        []admission
			got, exact int64
		)
		// The exact bucket: tokens as a rational, full at the start.
		ex := new(big.Rat).SetInt64(c.burst)
		rate := big.NewRat(c.rate, int64(c.per))
		now, last := int64(1<<40), int64(1<<40)
		for range 600 {
			switch rng.IntN(30) {
			case 0:
				if p.Wrap() > 1<<56 {
					break
				}
				// Idle for whole wraps, give or take a full refill.
				wrapped = true
				now += int64(p.Wrap())*(1+rng.Int64N(3)) + rng.Int64N(2*tok*c.burst) - tok*c.burst
			default:
				now += rng.Int64N(2*tok + 1)
			}
			now = max(now, last)
			n := 1 + rng.Int64N(min(c.burst, 4))
			ex.Add(ex, new(big.Rat).Mul(rate, new(big.Rat).SetInt64(now-last)))
			if ex.Cmp(new(big.Rat).SetInt64(c.burst)) > 0 {
				ex.SetInt64(c.burst)
			}
			last = now
			if ex.Cmp(new(big.Rat).SetInt64(n)) >= 0 {
				ex.Sub(ex, new(big.Rat).SetInt64(n))
				exact += n
			}
			next, r, _ := p.Step(BucketState{w, now}, now, n)
			if r.OK {
				w, got = next.Word, got+n
				adm = append(adm, admission{now, n})
			}
		}
		checkBucketBound(t, adm, &p)
		if wrapped {
			worstWrapped = min(worstWrapped, float64(got)/float64(exact))
		} else {
			worst = min(worst, float64(got)/float64(exact))
		}
	}
	t.Logf("lowest ratio of tokens admitted to an exact bucket's: %.4f; with idle gaps of whole wraps: %.4f", worst, worstWrapped)
}

// FuzzBucketWrap checks the package doc's claim: with ref at or after the
// write, a wrapped word never admits more than the unwrapped one.
func FuzzBucketWrap(f *testing.F) {
	f.Add(int64(1000), int64(5), uint64(1<<40+5), uint64(100), int64(1<<41), int64(1), uint64(7))
	f.Add(int64(1000), int64(5), uint64(3), uint64(100), int64(1<<40+1000), int64(1), uint64(1<<40+2))
	f.Add(int64(1), int64(6), uint64(math.MaxInt64-5), uint64(1<<23), int64(math.MaxInt64), int64(6), uint64(math.MaxUint64))
	f.Add(int64(1), int64(1), uint64(1)<<63, uint64(1<<20), int64(math.MinInt64), int64(1), uint64(5))
	f.Fuzz(func(t *testing.T, rate int64, burst int64, written, deficit uint64, now, n int64, refAhead uint64) {
		p, err := NewBucketParams(rate, time.Second, burst)
		if err != nil {
			return
		}
		// Written at any unit of int64 time; ref anywhere from the write to
		// the end of time, many wraps on; now anywhere.
		tw := int64(written) >> p.clk.shift
		d := deficit % (p.cap + 1)
		w := p.word(tw, d)
		ref := aheadOf(tw, refAhead, p.clk.shift)
		_, got, err := p.Step(BucketState{w, ref}, now, n)
		if err != nil {
			return
		}
		_, gotLeft, _ := p.Step(BucketState{w, ref}, now, 0)
		// The unwrapped bucket: the same word with its true time.
		model := newBucketRef(&p)
		model.t, model.deficit = tw, new(big.Int).SetUint64(d)
		wantLeft := model.step(now, 0)
		if want := model.step(now, n); got.OK && !want.OK || gotLeft.Remaining > wantLeft.Remaining ||
			!got.OK && !want.OK && got.RetryAfter < want.RetryAfter {
			t.Fatalf("written at unit %d, deficit %d, now %d, ref %d: wrapped %+v (%d left), unwrapped %+v (%d left)",
				tw, d, now, ref, got, gotLeft.Remaining, want, wantLeft.Remaining)
		}
	})
}

// aheadOf returns a time in ns whose unit (2^shift ns) is at or after unit
// u and at most the unit of math.MaxInt64, chosen by x.
func aheadOf(u int64, x uint64, shift uint8) int64 {
	room := uint64(math.MaxInt64>>shift) - uint64(u)
	if room != math.MaxUint64 {
		x %= room + 1
	}
	return (u + int64(x)) << shift
}

func TestBucketConcurrentConservation(t *testing.T) {
	// A token is a whole number of units (31250 of 32ns), so costs add up
	// and the total taken does not depend on how requests are split.
	b, _ := NewBucket(1000, time.Second, 500)
	p := b.Params()
	checkConservation(t, b, &b.c.word, int64(300*time.Millisecond), func(w uint64, now int64) (uint64, bool) {
		next, r, _ := p.Step(BucketState{BucketWord(w), now}, now, 1)
		return uint64(next.Word), r.OK
	})
}

// checkConservation races goroutines on l, whose state is word, at a series
// of shared instants; at each they must admit exactly what a sequential
// twin running step admits there, and leave the same word.
func checkConservation(t *testing.T, l limit.Limiter, word *atomic.Uint64, maxGap int64, step func(w uint64, now int64) (uint64, bool)) {
	t.Helper()
	var twin uint64
	rng := rand.New(rand.NewPCG(15, 16))
	now := int64(1e12)
	rounds := 200
	if testing.Short() {
		rounds = 40
	}
	for range rounds {
		now += rng.Int64N(maxGap)
		got := limittest.RaceAt(l, now, 8)
		want := int64(0)
		for {
			next, ok := step(twin, now)
			if !ok {
				break
			}
			twin, want = next, want+1
		}
		if got != want {
			t.Fatalf("at %d: goroutines admitted %d, a sequential twin %d", now, got, want)
		}
		if w := word.Load(); w != twin {
			t.Fatalf("at %d: word %#x, sequential %#x", now, w, twin)
		}
	}
}

func TestBucketZero(t *testing.T) {
	var b Bucket
	if b.AllowAt(1) || b.TokensAt(1) != 0 {
		t.Fatal("zero Bucket admitted")
	}
	if r, err := b.AllowNAt(1, 1); r.OK || !errors.Is(err, limit.ErrCostExceedsBurst) {
		t.Fatalf("AllowNAt(1, 1) = %+v, %v", r, err)
	}
	if _, err := NewBucket(0, time.Second, 1); err == nil || !strings.HasPrefix(err.Error(), "packed64: events") {
		t.Fatalf("NewBucket(0, ...) error %v", err)
	}
}

// FuzzBucketStep feeds Step any word, time and cost: it must not panic,
// must leave the word alone when it denies, must not point a wait past the
// end of int64 time, and must never store a deficit above the capacity.
func FuzzBucketStep(f *testing.F) {
	f.Add(int64(10), int64(3), uint64(math.MaxUint64), int64(5), int64(7), int64(1))
	f.Add(int64(3906250), int64(MaxBurst), uint64(1)<<40|1, int64(-1), int64(0), int64(MaxBurst))
	end, _ := NewBucketParams(1, time.Second, 6) // emptied at the last unit of time
	f.Add(int64(1), int64(6), uint64(end.word(end.clk.units(math.MaxInt64), end.cap)), int64(math.MaxInt64-5), int64(math.MaxInt64), int64(1))
	f.Fuzz(func(t *testing.T, events, burst int64, w uint64, now, ref, n int64) {
		p, err := NewBucketParams(events, time.Second, burst)
		if err != nil {
			return
		}
		s := BucketState{BucketWord(w), ref}
		ns, r, err := p.Step(s, now, n)
		next := ns.Word
		if err != limittest.WantErr(n, burst) {
			t.Fatalf("n %d: error %v", n, err)
		}
		switch {
		case err != nil:
			if next != BucketWord(w) || r.OK || r.RetryAfter != limit.Never {
				t.Fatalf("error %v with %+v", err, r)
			}
		case !r.OK:
			if next != BucketWord(w) || r.RetryAfter <= 0 || r.Remaining < 0 || r.Remaining >= n ||
				r.RetryAfter != limit.Never && now > math.MaxInt64-int64(r.RetryAfter) {
				t.Fatalf("denial %+v changed the word or has no wait, or a wait past the end of time", r)
			}
		case n > 0 && unpackBucket(next).Deficit > p.cap:
			t.Fatalf("stored deficit %d above capacity %d", unpackBucket(next).Deficit, p.cap)
		case r.Remaining < 0 || r.Remaining > burst-n || r.RetryAfter != 0:
			t.Fatalf("admission %+v", r)
		}
		if tok := p.TokensAt(s, now); tok < 0 || tok > float64(burst)+1 {
			t.Fatalf("TokensAt %v", tok)
		}
		if _, r0, _ := p.Step(s, now, 0); p.RemainingAt(s, now) != r0.Remaining {
			t.Fatalf("RemainingAt %d, Step(n = 0) %+v", p.RemainingAt(s, now), r0)
		}
	})
}

// TestDenialWritesNothing runs denials on a Bucket and a Window in
// read-only memory: a denial stores neither the word nor the HighWater.
func TestDenialWritesNothing(t *testing.T) {
	b, err := NewBucket(3, time.Second, 5)
	if err != nil {
		t.Fatal(err)
	}
	for b.AllowAt(1000) {
	}
	limittest.DenialsWriteNothing(t, limittest.ReadOnly(t, &b.c), 1000, int64(time.Second), 1, 5)
	w, err := NewWindow(4, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for w.AllowAt(1000) {
	}
	limittest.DenialsWriteNothing(t, limittest.ReadOnly(t, &w.c), 1000, int64(3*time.Second), 1, 4)
}
