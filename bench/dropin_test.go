package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/cellrate/cellrate/internal/bound"
	crate "github.com/cellrate/cellrate/rate"
)

// reservation is x/time/rate's Reservation method set.
type reservation interface {
	Cancel()
	CancelAt(t time.Time)
	Delay() time.Duration
	DelayFrom(t time.Time) time.Duration
	OK() bool
}

// limiter is x/time/rate's Limiter method set, over its Limit and
// Reservation types.
type limiter[L ~float64, R reservation] interface {
	Allow() bool
	AllowN(t time.Time, n int) bool
	Burst() int
	Limit() L
	Reserve() R
	ReserveN(t time.Time, n int) R
	SetBurst(newBurst int)
	SetBurstAt(t time.Time, newBurst int)
	SetLimit(newLimit L)
	SetLimitAt(t time.Time, newLimit L)
	Tokens() float64
	TokensAt(t time.Time) float64
	Wait(ctx context.Context) error
	WaitN(ctx context.Context, n int) error
}

// Both packages have the same method set and package-level API: code
// written against one compiles against the other.
var (
	_ limiter[rate.Limit, *rate.Reservation]   = rate.NewLimiter(1, 1)
	_ limiter[crate.Limit, *crate.Reservation] = crate.NewLimiter(1, 1)
	_                                          = [...]any{rate.Inf, rate.InfDuration, rate.Every, (*rate.Sometimes).Do}
	_                                          = [...]any{crate.Inf, crate.InfDuration, crate.Every, (*crate.Sometimes).Do}
)

// outcome is what one call returned.
type outcome struct {
	n     int // tokens asked for
	ok    bool
	delay time.Duration
	toks  float64
}

// drive runs the same seeded schedule of in-order AllowN, ReserveN and
// SetLimitAt/SetBurstAt calls on a limiter of either package.
func drive[L ~float64, R reservation](l limiter[L, R], seed uint64) []outcome {
	r := rand.New(rand.NewPCG(seed, 3))
	now := epoch
	var out []outcome
	for range 3000 {
		now = now.Add(time.Duration(1+r.IntN(40)) * time.Millisecond) // a setter at the time of the last refill loses 1ns of it here
		o := outcome{toks: l.TokensAt(now)}
		switch k := r.IntN(10); {
		case k == 0 && l.Limit() > 0: // at limit 0 x/time/rate's are OK with an infinite delay
			o.n = r.IntN(3)
			res := l.ReserveN(now, o.n)
			o.ok, o.delay = res.OK(), res.DelayFrom(now)
		case k == 1:
			l.SetLimitAt(now, L([]float64{10, 20, 50, 0, math.MaxFloat64}[r.IntN(5)]))
		case k == 2:
			l.SetBurstAt(now, 1+r.IntN(5))
		default:
			o.n = r.IntN(4)
			o.ok = l.AllowN(now, o.n)
		}
		out = append(out, o)
	}
	return out
}

// TestDropInAgrees: on schedules where none of the documented differences
// apply (times in order, no cancels, no reservation at limit 0, rates whose
// tokens are whole milliseconds), both packages make the same decisions and
// waits, and report the same tokens up to x/time/rate's float rounding and
// the drop-in's rounding at a limit change (at most 1ns of refill each).
func TestDropInAgrees(t *testing.T) {
	for seed := range uint64(20) {
		x := drive(rate.NewLimiter(10, 3), seed)
		c := drive(crate.NewLimiter(10, 3), seed)
		for i := range x {
			boundary := math.Abs(x[i].toks-float64(x[i].n)) < 1e-6 // 1ns of refill decides
			if (x[i].ok != c[i].ok && !boundary) || (x[i].delay-c[i].delay)/100 != 0 || math.Abs(x[i].toks-c[i].toks) > 1e-6 {
				t.Fatalf("seed %d, call %d: x/time/rate %+v, cellrate %+v", seed, i, x[i], c[i])
			}
		}
	}
}

// TestReservationsActEarly: at 3 tokens per second x/time/rate truncates
// each wait to a whole ns, so a chain of reservations acts up to 1ns early
// and breaks the exact bound; the drop-in rounds up and keeps it.
func TestReservationsActEarly(t *testing.T) {
	check := func(reserve func(n int) time.Duration) error {
		var uses []bound.Use
		for range 10 {
			uses = append(uses, bound.Use{At: int64(reserve(1)), Cost: 1})
		}
		return bound.Check(uses, 1, 3, uint64(time.Second))
	}
	x := rate.NewLimiter(3, 1)
	if err := check(func(n int) time.Duration { return x.ReserveN(epoch, n).DelayFrom(epoch) }); err == nil {
		t.Error("x/time/rate kept the exact bound: the test no longer shows its truncation")
	}
	c := crate.NewLimiter(3, 1)
	if err := check(func(n int) time.Duration { return c.ReserveN(epoch, n).DelayFrom(epoch) }); err != nil {
		t.Error(err)
	}
}

// zeroOutcomes runs every method once on a zero Limiter of either package,
// then gives it a burst and a limit, and returns what each call returned.
func zeroOutcomes[L ~float64, R reservation](l limiter[L, R]) []any {
	ctx := context.Background()
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	out := []any{
		l.Allow(), l.AllowN(epoch, 0), l.AllowN(epoch, 1),
		l.Reserve().OK(), l.ReserveN(epoch, 0).OK(), l.ReserveN(epoch, 1).OK(),
		l.Tokens(), l.TokensAt(epoch), float64(l.Limit()), l.Burst(),
		errText(l.Wait(ctx)), errText(l.WaitN(ctx, 0)), errText(l.WaitN(ctx, 2)),
	}
	l.SetBurstAt(epoch, 2)
	l.SetLimitAt(epoch, 10)
	return append(out, l.AllowN(epoch, 1), l.TokensAt(epoch), l.AllowN(epoch.Add(100*time.Millisecond), 1), l.Burst())
}

// TestZeroLimiterAgrees: the drop-in's zero Limiter is x/time/rate's: it
// rejects every event but n = 0, with the same Wait errors, and a burst and
// a limit set later start it empty.
func TestZeroLimiterAgrees(t *testing.T) {
	var x rate.Limiter
	var c crate.Limiter
	xo, co := zeroOutcomes[rate.Limit, *rate.Reservation](&x), zeroOutcomes[crate.Limit, *crate.Reservation](&c)
	if len(xo) != len(co) {
		t.Fatalf("%d outcomes against %d", len(xo), len(co))
	}
	for i := range xo {
		if xo[i] != co[i] {
			t.Errorf("call %d: x/time/rate %v, cellrate %v", i, xo[i], co[i])
		}
	}
	if xo[0] != false || xo[2] != false {
		t.Errorf("x/time/rate's zero Limiter admitted: %v", xo)
	}
}

// Sinks that keep each Reservation on the heap, as a caller that keeps it
// (to Cancel later) does.
var (
	xSink *rate.Reservation
	cSink *crate.Reservation
)

// BenchmarkReserveDropIn: ReserveN and CancelAt of one token, at a rate
// that always has it, on x/time/rate and on the drop-in, as two
// sub-benchmarks to compare with benchstat (-count >= 6; they alternate).
func BenchmarkReserveDropIn(b *testing.B) {
	b.Run("x-time-rate", func(b *testing.B) {
		l := rate.NewLimiter(1e9, 1000)
		b.ReportAllocs()
		now := epoch
		for range b.N {
			now = now.Add(time.Microsecond)
			xSink = l.ReserveN(now, 1)
			xSink.CancelAt(now)
		}
	})
	b.Run("cellrate", func(b *testing.B) {
		l := crate.NewLimiter(1e9, 1000)
		b.ReportAllocs()
		now := epoch
		for range b.N {
			now = now.Add(time.Microsecond)
			cSink = l.ReserveN(now, 1)
			cSink.CancelAt(now)
		}
	})
}
