package packed64core

// Edges the other tests left open, found by `make mutate` (MUTANTS.md):
// the units and spans chosen for the corners of the parameter space, the
// Ref a step gives a fresh word, queries that must write nothing, Undo's
// half-wrap cut, and a stale denial in the last unit of time.

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/limittest"
	"github.com/cellrate/cellrate/limit"
)

// spans checks a clock's Unit, Wrap and Slack against their design: the
// field wraps after 2^bits units (math.MaxInt64 once that passes int64 ns),
// and the slack is 2^(bits-12) units (a 4096th of the wrap, which bounds
// the dips the package doc describes), at most 2^40ns. A smaller slack
// would still be correct, but would write the shared mark more often.
func spans(t *testing.T, what string, unit, wrap time.Duration, slack int64, bits uint) {
	t.Helper()
	if unit <= 0 || unit&(unit-1) != 0 {
		t.Errorf("%s: unit %d is not a power of two", what, unit)
		return
	}
	want := new(big.Int).Lsh(big.NewInt(int64(unit)), bits)
	if !want.IsInt64() {
		want.SetInt64(math.MaxInt64)
	}
	if int64(wrap) != want.Int64() {
		t.Errorf("%s: unit %d, wrap %d, want %v", what, unit, wrap, want)
	}
	w := new(big.Int).Lsh(big.NewInt(int64(unit)), bits-12)
	if w.Cmp(big.NewInt(1<<40)) > 0 {
		w.SetInt64(1 << 40)
	}
	if w.Cmp(big.NewInt(slack)) != 0 {
		t.Errorf("%s: unit %d, slack %d, want %v", what, unit, slack, w)
	}
}

// bucketUnitCases are parameters at the corners of the unit choice: a
// token's refill just under 2^(s+8) ns per event (so the finest unit is
// 2^(s-1), where burst MaxBurst just fits), and burst*period whose high
// 64 bits are exactly events<<s (where the quotient's width decides).
func bucketUnitCases(rng *rand.Rand) []bucketCase {
	var cs []bucketCase
	for range 200 {
		cs = append(cs, randomBucket(rng))
	}
	for _, rate := range []int64{1, 3, 1000} {
		for s := 1; s < 56; s++ {
			per := new(big.Int).Lsh(big.NewInt(rate), uint(s+8))
			per.Sub(per, big.NewInt(1))
			if !per.IsInt64() {
				break
			}
			for _, burst := range []int64{1, 2, MaxBurst} {
				cs = append(cs, bucketCase{rate, time.Duration(per.Int64()), burst})
			}
		}
		for s := 0; s < 14; s++ {
			// burst*per in [(rate<<s)<<64, (rate<<s + 1)<<64).
			num := new(big.Int).Lsh(big.NewInt(rate), uint(s)+64)
			for _, burst := range []int64{MaxBurst, MaxBurst/2 + 1} {
				per := new(big.Int).Add(num, big.NewInt(burst-1))
				per.Quo(per, big.NewInt(burst))
				if per.IsInt64() {
					cs = append(cs, bucketCase{rate, time.Duration(per.Int64()), burst})
				}
			}
		}
	}
	return cs
}

// TestBucketUnit: the unit is the finest power of two in which a full
// bucket fits the 24-bit deficit, and for any burst up to MaxBurst it is at
// most a 256th of a token (at least 8 fractional bits, as the package doc
// says); the capacity is burst tokens of a whole number of units each.
func TestBucketUnit(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, c := range bucketUnitCases(rng) {
		p, err := NewBucketParams(c.rate, c.per, c.burst)
		if err != nil {
			t.Fatalf("NewBucketParams(%d, %d, %d): %v", c.rate, c.per, c.burst, err)
		}
		what := func() string {
			return "rate " + big.NewInt(c.rate).String() + " per " + c.per.String() + " burst " + big.NewInt(c.burst).String()
		}
		unit := p.Unit()
		spans(t, what(), unit, p.Wrap(), p.Slack(), bucketTimeBits)
		if unit <= 0 {
			continue
		}
		// burst * ceil(per / (rate*u)): burst tokens of whole units each.
		capIn := func(u *big.Int) *big.Int {
			den := new(big.Int).Mul(big.NewInt(c.rate), u)
			q, m := new(big.Int).QuoRem(big.NewInt(int64(c.per)), den, new(big.Int))
			if m.Sign() != 0 {
				q.Add(q, big.NewInt(1))
			}
			return q.Mul(q, big.NewInt(c.burst))
		}
		field := big.NewInt(1 << bucketDeficitBits)
		u := big.NewInt(int64(unit))
		if got := capIn(u); got.Cmp(field) >= 0 || got.Uint64() != p.cap {
			t.Errorf("%s: unit %v, capacity %d, want %v below 2^24", what(), unit, p.cap, got)
		}
		if unit > 1 && capIn(new(big.Int).Rsh(u, 1)).Cmp(field) < 0 {
			t.Errorf("%s: unit %v, but a full bucket fits in units of half that", what(), unit)
		}
		// A token's refill time is at least 256 units: per >= 256*rate*u.
		if new(big.Int).Mul(big.NewInt(256*c.rate), u).Cmp(big.NewInt(int64(c.per))) > 0 {
			t.Errorf("%s: unit %v is more than a 256th of a token", what(), unit)
		}
	}
}

// TestBucketPeriodErrorMin: a period below 256ns is refused with, as Min,
// the least period the events allow (256ns each), which is accepted while
// the ns just below it are not.
func TestBucketPeriodErrorMin(t *testing.T) {
	for _, ev := range []int64{1, 2, 3, 1000, math.MaxInt64/minTokenNs - 1, math.MaxInt64 / minTokenNs} {
		_, err := NewBucketParams(ev, minTokenNs-1, 1)
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Param != "period" {
			t.Fatalf("events %d, period 255ns: error %v", ev, err)
		}
		least, ok := pe.Min.(time.Duration)
		if !ok || int64(least)/minTokenNs != ev || int64(least)%minTokenNs != 0 {
			t.Errorf("events %d: Min %v, want %d*256ns", ev, pe.Min, ev)
			continue
		}
		if _, err := NewBucketParams(ev, least, 1); err != nil {
			t.Errorf("events %d: the Min period %v is refused: %v", ev, least, err)
		}
		if _, err := NewBucketParams(ev, least-1, 1); err == nil {
			t.Errorf("events %d: a period below the Min %v is accepted", ev, least)
		}
	}
}

// TestWindowSpans: a window's unit, wrap and slack across window lengths
// of every width, including those whose wrap is 2^63ns and more.
func TestWindowSpans(t *testing.T) {
	for k := range 63 {
		for _, w := range []int64{1 << k, 1<<k - 1, 1<<k + 1, 3 << k} {
			if w < 1 || w > int64(MaxWindow) {
				continue
			}
			p, err := NewWindowParams(1, time.Duration(w))
			if err != nil {
				t.Fatal(err)
			}
			spans(t, "window "+time.Duration(w).String(), p.Unit(), p.Wrap(), p.Slack(), windowStartBits)
		}
	}
}

// TestStepFreshStateAnyRef: a word never written may come with any Ref
// (the package doc), as far ahead of now or behind it as it likes; the
// steps from it, keeping the states they return, decide as the reference
// model does.
func TestStepFreshStateAnyRef(t *testing.T) {
	bp, _ := NewBucketParams(10, time.Second, 5)
	wp, _ := NewWindowParams(5, time.Second)
	rng := rand.New(rand.NewPCG(43, 44))
	for _, c := range []struct {
		name string
		wrap int64
		run  func(ref, now int64, ops []op) (got, want limit.Result, i int)
	}{
		{"bucket", int64(bp.Wrap()), func(ref, now int64, ops []op) (got, want limit.Result, i int) {
			m := newBucketRef(&bp)
			s := BucketState{Ref: ref}
			for i, o := range ops {
				s, got, _ = bp.Step(s, now+o.at, o.n)
				if want = m.step(now+o.at, o.n); got != want {
					return got, want, i
				}
			}
			return got, want, -1
		}},
		{"window", int64(wp.Wrap()), func(ref, now int64, ops []op) (got, want limit.Result, i int) {
			m := newWindowRef(&wp)
			s := WindowState{Ref: ref}
			for i, o := range ops {
				s, got, _ = wp.Step(s, now+o.at, o.n)
				if want = m.step(now+o.at, o.n); got != want {
					return got, want, i
				}
			}
			return got, want, -1
		}},
	} {
		for _, ahead := range []int64{0, 1, -1, c.wrap / 2, c.wrap - 1, c.wrap, 3*c.wrap + 12345, -5 * c.wrap} {
			now := int64(1e15) + rng.Int64N(1e12)
			ops := randomOps(rng, int64(time.Second), 5, 60)
			if got, want, i := c.run(now+ahead, now, ops); i >= 0 {
				t.Errorf("%s: fresh state with Ref now%+d: op %d %+v: got %+v, want %+v", c.name, ahead, i, ops[i], got, want)
			}
		}
	}
}

// op is a request of n at a time relative to a schedule's start.
type op struct{ at, n int64 }

// randomOps returns a schedule over about span ns: costs in [0, most],
// times forward with a few stale ones.
func randomOps(rng *rand.Rand, span, most int64, count int) []op {
	ops := make([]op, count)
	at := int64(0)
	for i := range ops {
		at += rng.Int64N(span / 8)
		ops[i] = op{at, rng.Int64N(most + 1)}
		if rng.IntN(6) == 0 {
			ops[i].at -= rng.Int64N(span / 4)
		}
	}
	return ops
}

// TestCellsExactAcrossIdleWraps: a single Bucket or Window fed one clock
// reads its word exactly however long it idles, whole wraps included (its
// mark only rises with its own writes), so it decides as the reference
// model does; a query (n = 0, Remaining) between writes changes nothing,
// not even the mark, so the idle ends with the same decisions.
func TestCellsExactAcrossIdleWraps(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	b, _ := NewBucket(1, 256, 3) // a token per 256ns: wrap 2^40ns
	w, _ := NewWindow(3, time.Microsecond)
	for _, c := range []struct {
		name   string
		wrap   int64
		span   int64
		allowN func(now, n int64) (limit.Result, error)
		left   func(now int64) int64
		ref    func(now, n int64) limit.Result
	}{
		{"Bucket", int64(b.Params().Wrap()), 3 * 256, b.AllowNAt, b.RemainingAt, newBucketRef(&b.c.p).step},
		{"Window", int64(w.Params().Wrap()), int64(w.Params().Window()), w.AllowNAt, w.RemainingAt, newWindowRef(&w.c.p).step},
	} {
		now := rng.Int64N(1 << 40)
		for i := range 400 {
			switch k := rng.IntN(10); {
			case k < 2:
				// Idle for whole wraps and a little: the word's time
				// field reads as it did when written.
				now += (1+rng.Int64N(8))*c.wrap + rng.Int64N(c.span)
			default:
				now += rng.Int64N(c.span)
			}
			if rng.IntN(2) == 0 {
				if _, err := c.allowN(now, 0); err != nil {
					t.Fatal(err)
				}
				c.left(now)
			}
			n := 1 + rng.Int64N(3)
			got, _ := c.allowN(now, n)
			if want := c.ref(now, n); got != want {
				t.Fatalf("%s: request %d, %d at %d: got %+v, want %+v", c.name, i, n, now, got, want)
			}
		}
	}
}

// TestUndoHalfAWrap: Undo gives an admission back while the reference is
// less than half a wrap past it, and refuses once it is half a wrap past
// (the package doc: another admission whole wraps later could leave the
// same bits).
func TestUndoHalfAWrap(t *testing.T) {
	bp, _ := NewBucketParams(1, time.Second, 3)
	wp, _ := NewWindowParams(3, time.Second)
	const at = int64(1e12)
	bs, _, _ := bp.Step(BucketState{}, at, 2)
	ws, _, _ := wp.Step(WindowState{}, at, 2)
	for _, c := range []struct {
		name string
		half int64
		undo func(ref int64) bool
	}{
		{"bucket", int64(bp.Wrap() / 2), func(ref int64) bool {
			s, ok := bp.Undo(BucketState{bs.Word, ref}, at, 0, bs.Word)
			return ok && s == BucketState{0, ref}
		}},
		{"window", int64(wp.Wrap() / 2), func(ref int64) bool {
			s, ok := wp.Undo(WindowState{ws.Word, ref}, at, 0, ws.Word)
			return ok && s == WindowState{0, ref}
		}},
	} {
		if !c.undo(at) || !c.undo(at+c.half-1) {
			t.Errorf("%s: Undo refused within half a wrap", c.name)
		}
		if c.undo(at+c.half) || c.undo(at+2*c.half) {
			t.Errorf("%s: Undo gave back half a wrap or more after the admission", c.name)
		}
	}
}

// TestWithClockPlainMethods: the plain methods of a Window read the clock
// WithClock gave (Bucket's are in ExampleWithClock).
func TestWithClockPlainMethods(t *testing.T) {
	now := int64(time.Hour)
	w, _ := NewWindow(2, time.Second, WithClock(func() int64 { return now }))
	if !w.Allow() || w.Remaining() != 1 || w.Estimate() != 1 {
		t.Fatal("the first unit at the clock's time")
	}
	if r, _ := w.AllowN(2); r.OK || r.Remaining != 1 {
		t.Fatalf("AllowN(2) with one unit left: %+v", r)
	}
	now += 3 * int64(time.Second) // two windows (rounded up to units) and more: all forgotten
	if w.Remaining() != 2 || w.Estimate() != 0 {
		t.Fatalf("three seconds later: Remaining %d, Estimate %v; want 2 and 0", w.Remaining(), w.Estimate())
	}
	if r, _ := w.AllowN(2); !r.OK {
		t.Fatalf("AllowN(2) three seconds later: %+v", r)
	}
}

// TestTablesOfOne: a table may hold a single limiter.
func TestTablesOfOne(t *testing.T) {
	bs, err := NewBuckets(1, 1, time.Second, 1)
	if err != nil || bs.Len() != 1 || !bs.AllowAt(0, 0) || bs.AllowAt(0, 0) {
		t.Fatalf("NewBuckets(1, ...): %v", err)
	}
	ws, err := NewWindows(1, 1, time.Second)
	if err != nil || ws.Len() != 1 || !ws.AllowAt(0, 0) || ws.AllowAt(0, 0) {
		t.Fatalf("NewWindows(1, ...): %v", err)
	}
}

// TestBucketStepMatchesReferenceAtTheEnd runs Step in the last units of
// int64 time against the reference model: with the bucket emptied so that
// a request's refill ends in the last unit, one unit before it, or one
// after (where time stops: RetryAfter Never), and on random schedules with
// stale nows.
func TestBucketStepMatchesReferenceAtTheEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	for _, c := range []bucketCase{{1, time.Second, 6}, {1, 256, 3}, {5, 5 * 1024, 4}, {2, time.Second, 10}, {3, 1000, 2}} {
		p, err := NewBucketParams(c.rate, c.per, c.burst)
		if err != nil {
			t.Fatal(err)
		}
		unit := int64(p.Unit())
		last := int64(math.MaxInt64) / unit // the last unit of time
		fail := func(what string, at, n int64, got, want limit.Result) {
			t.Helper()
			t.Fatalf("rate %d per %v burst %d (unit %d), %s: %d at MaxInt64-%d: got %+v, want %+v",
				c.rate, c.per, c.burst, unit, what, n, math.MaxInt64-at, got, want)
		}
		// Emptied at unit e, the bucket holds n tokens again at e + cost(n):
		// aim that at the last unit and its neighbours.
		for n := int64(1); n <= c.burst; n++ {
			for _, off := range []int64{-1, 0, 1} {
				m := newBucketRef(&p)
				e := last - m.cost(n).Int64() + off
				at := e*unit + rng.Int64N(unit)
				s, _, _ := p.Step(BucketState{}, at, c.burst)
				m.step(at, c.burst)
				for later := e; later <= min(e+2, last); later++ {
					at2 := later*unit + rng.Int64N(unit) // in int64: MaxInt64+1 is a multiple of unit
					if _, got, _ := p.Step(s, at2, n); got != m.step(at2, n) {
						fail("refill aimed at the last unit", at2, n, got, m.step(at2, n))
					}
				}
			}
		}
		runs := 200
		if testing.Short() {
			runs = 60
		}
		for range runs {
			m := newBucketRef(&p)
			var s BucketState
			now := math.MaxInt64 - rng.Int64N(4*unit)
			for range 20 {
				at := now
				switch rng.IntN(4) {
				case 0:
					now = satAdd(now, rng.Int64N(2*unit))
					at = now
				case 1:
					at = now - rng.Int64N(3*unit)
				}
				n := 1 + rng.Int64N(c.burst)
				next, got, _ := p.Step(s, at, n)
				if want := m.step(at, n); got != want {
					fail("random schedule", at, n, got, want)
				}
				s = next
			}
		}
	}
}

// TestDenialPastTheMarkWritesNothing: a denial writes nothing, neither the
// word nor the HighWater, also at a now past the mark plus the slack: the
// word was written there (at the mark plus the slack, which raises
// nothing) and is still empty just after.
func TestDenialPastTheMarkWritesNothing(t *testing.T) {
	const t0 = int64(1e12)
	b, _ := NewBucket(3, time.Second, 5)
	t1 := t0 + b.Params().Slack()
	for _, now := range []int64{t0, t1} {
		for b.AllowAt(now) {
		}
	}
	if m := b.c.hw.mark(); m != t0 {
		t.Fatalf("bucket: mark %d, want %d", m, t0)
	}
	limittest.DenialsWriteNothing(t, limittest.ReadOnly(t, &b.c), t1+1, t1+int64(2*time.Second), 1, 5)
	w, _ := NewWindow(4, time.Second)
	t1 = t0 + w.Params().Slack()
	for _, now := range []int64{t0, t1} {
		for w.AllowAt(now) {
		}
	}
	if m := w.c.hw.mark(); m != t0 {
		t.Fatalf("window: mark %d, want %d", m, t0)
	}
	limittest.DenialsWriteNothing(t, limittest.ReadOnly(t, &w.c), t1+1, t1+int64(3*time.Second), 1, 4)
}

// TestStepOneAtTheWindowEdges: StepOne decides as Step at each edge of the
// windows a word counts: a stale now in the first unit of the previous
// window (counted there), one unit before it (refused), the current
// window's first and last units, and the next windows'.
func TestStepOneAtTheWindowEdges(t *testing.T) {
	for _, c := range []struct {
		limit int64
		win   time.Duration
	}{{3, time.Second}, {1, 4096}, {100, time.Millisecond}, {MaxWindowLimit, time.Hour}} {
		p, err := NewWindowParams(c.limit, c.win)
		if err != nil {
			t.Fatal(err)
		}
		unit, w := int64(p.Unit()), int64(p.r.W)
		start := int64(1e15) >> p.clk.shift // in units
		for _, counts := range [][2]uint64{{0, 1}, {1, 0}, {p.r.L - 1, 0}, {0, p.r.L - 1}, {p.r.L, 0}} {
			word := packWindow(windowFields{Start: uint64(start), Prev: counts[0], Cur: counts[1]})
			ref := start<<p.clk.shift + p.Slack()
			for _, du := range []int64{-w - 1, -w, -w + 1, -1, 0, 1, w - 1, w, w + 1, 2*w - 1, 2 * w} {
				now := (start+du)*unit + unit/2
				want, r, _ := p.Step(WindowState{word, ref}, now, 1)
				if got, ok := p.StepOne(word, now, ref); ok != r.OK || ok && got != want.Word {
					t.Fatalf("limit %d window %v, counts %v, now start%+d units: StepOne %#x %v, Step %#x %+v",
						c.limit, c.win, counts, du, got, ok, want.Word, r)
				}
			}
		}
	}
}
