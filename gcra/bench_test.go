package gcra

import (
	"math/bits"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/internal/cell"
	"github.com/cellrate/cellrate/internal/gcrastep"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

var sink bool

// BenchmarkNanotimeNow is the baseline for BenchmarkAllow: Allow costs
// nanotime.Now plus AllowAt.
func BenchmarkNanotimeNow(b *testing.B) {
	var s int64
	for b.Loop() {
		s += nanotime.Now()
	}
	sink = s == 1
}

func BenchmarkAllowAt(b *testing.B) {
	b.Run("constant-denying", func(b *testing.B) {
		l, _ := New(3, time.Second, 10)
		b.ReportAllocs()
		for b.Loop() {
			sink = l.AllowAt(0)
		}
	})
	b.Run("advancing-admitting", func(b *testing.B) {
		// One event per 3 ns, now advancing 3 ns per call: every call is
		// admitted with the TAT ahead of now (no idle restart).
		l, _ := New(1, 3, 10)
		b.ReportAllocs()
		now := int64(0)
		for b.Loop() {
			now += 3
			sink = l.AllowAt(now)
		}
	})
	b.Run("advancing-idle-restart", func(b *testing.B) {
		// 3 per second, now advancing a second per call: every call finds
		// the limiter full and restarts the TAT (the division path).
		l, _ := New(3, time.Second, 10)
		b.ReportAllocs()
		now := int64(0)
		for b.Loop() {
			now += int64(time.Second)
			sink = l.AllowAt(now)
		}
	})
}

func BenchmarkAllow(b *testing.B) {
	l, _ := New(1, 1, 1000) // one per ns: mostly admitted
	b.ReportAllocs()
	for b.Loop() {
		sink = l.Allow()
	}
}

func BenchmarkAllowNAt(b *testing.B) {
	l, _ := New(1, 3, 10)
	b.ReportAllocs()
	now := int64(0)
	for b.Loop() {
		now += 6
		r, _ := l.AllowNAt(now, 2)
		sink = r.OK
	}
}

// BenchmarkParallel runs AllowAt on every P, each goroutine advancing its
// own injected time: admitting (one per ns, and a burst of 2^30 that covers
// the drift between the goroutines' clocks) and mostly denying (100 per
// second).
func BenchmarkParallel(b *testing.B) {
	for _, c := range []struct {
		name   string
		events int64
		period time.Duration
		burst  int64
	}{{"admitting", 1, 1, 1 << 30}, {"mostly-denying", 100, time.Second, 1000}} {
		b.Run(c.name, func(b *testing.B) {
			l, _ := New(c.events, c.period, c.burst)
			b.ReportAllocs()
			var admitted atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				now, n := int64(0), int64(0)
				for pb.Next() {
					now += 10
					if l.AllowAt(now) {
						n++
					}
				}
				admitted.Add(n)
			})
			b.ReportMetric(float64(admitted.Load())/float64(b.N), "admitted/op")
		})
	}
}

// BenchmarkLoadCAS is the floor for an admitting AllowAt: one sync/atomic
// load and one compare-and-swap.
func BenchmarkLoadCAS(b *testing.B) {
	var x atomic.Uint64
	for b.Loop() {
		v := x.Load()
		x.CompareAndSwap(v, v+1)
	}
}

// BenchmarkLoadCASParallel is the floor for BenchmarkParallel/admitting:
// every P loading and compare-and-swapping one shared word.
func BenchmarkLoadCASParallel(b *testing.B) {
	var x atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			v := x.Load()
			x.CompareAndSwap(v, v+1)
		}
	})
}

// reserveAtRunner is ReserveAt on cell.Run64, the baseline that
// BenchmarkReserveAt compares ReserveAt's written-out loop with.
func (l *Limiter) reserveAtRunner(now, n int64) (Reservation, error) {
	type out struct {
		r   Reservation
		err error
	}
	o := cell.Run64(&l.tat, func(tat uint64) (uint64, out, bool) {
		next, wait, ok, err := l.ps.Reserve(State(tat), now, n)
		if !ok {
			return tat, out{Reservation{Wait: limit.Never}, err}, false
		}
		r := Reservation{OK: true, Wait: wait, l: l, before: State(tat), after: next, act: now + int64(wait)}
		return uint64(next), out{r: r}, uint64(next) != tat
	})
	return o.r, o.err
}

var reservationSink Reservation

// BenchmarkReserveAt runs ReserveAt (its written-out loop) and the same
// step on cell.Run64, interleaved: admitted at once, an idle restart at
// every call, and waiting at every call (T whole, and T = 66.67 ns).
func BenchmarkReserveAt(b *testing.B) {
	for _, c := range []struct {
		name           string
		events         int64
		period         time.Duration
		burst, advance int64
	}{
		{"admitting", 1, 3, 10, 3},
		{"idle-restart", 3, time.Second, 10, int64(time.Second)},
		{"waiting", 1, 200, 1, 100},
		{"waiting-fractional", 3, 200, 2, 60},
	} {
		for _, runner := range []bool{false, true} {
			name := "loop/" + c.name
			if runner {
				name = "runner/" + c.name
			}
			b.Run(name, func(b *testing.B) {
				l, _ := New(c.events, c.period, c.burst)
				now := int64(0)
				b.ReportAllocs()
				for b.Loop() {
					now += c.advance
					if runner {
						reservationSink, _ = l.reserveAtRunner(now, 1)
					} else {
						reservationSink, _ = l.ReserveNAt(now, 1)
					}
				}
			})
		}
	}
}

// fixedGCRA is the Limiter as it was before SetRate (Params and TAT in
// the struct, no generation), the baseline BenchmarkAllowAtGen compares
// AllowAt's generation load with.
type fixedGCRA struct {
	ps  Params
	_   cpu.CacheLinePad
	tat atomic.Uint64
	_   cpu.CacheLinePad
}

func (l *fixedGCRA) allowAt(now int64) bool {
	ps := &l.ps
	a := ps.At(now, ps.J)
	var spin backoff.Spin
	for ; ; spin.Wait() {
		tat := l.tat.Load()
		kh, kl, wait := ps.Waits(State(tat), a)
		if wait {
			return false
		}
		next, carry := bits.Add64(tat, ps.J, 0)
		if carry != 0 || next == tat || gcrastep.Behind(kh, kl, a) {
			s, ok := ps.Settle(State(tat), a, ps.J, false)
			if !ok {
				return false
			}
			next = uint64(s)
		}
		if l.tat.CompareAndSwap(tat, next) {
			return true
		}
	}
}

// BenchmarkAllowAtGen: AllowAt (gen: never changed; changed: after a
// SetRate) against the same loop without generations (fixed), admitting
// (one event per ns, each call 1ns later) and denying; run with -count >= 6,
// they alternate.
func BenchmarkAllowAtGen(b *testing.B) {
	ps, _ := NewParams(1, 1, 1)
	deny, _ := NewParams(1, time.Hour, 1)
	for _, c := range []struct {
		name string
		ps   Params
	}{{"admitting", ps}, {"denying", deny}} {
		b.Run(c.name+"/gen", func(b *testing.B) {
			l, _ := NewFromParams(c.ps)
			for i := range b.N {
				l.AllowAt(int64(i))
			}
		})
		b.Run(c.name+"/changed", func(b *testing.B) {
			l, _ := NewFromParams(c.ps)
			_ = l.SetRateAt(0, 1/c.ps.Interval().Seconds()) // a second generation
			for i := range b.N {
				l.AllowAt(int64(i))
			}
		})
		b.Run(c.name+"/fixed", func(b *testing.B) {
			l := &fixedGCRA{ps: c.ps}
			for i := range b.N {
				l.allowAt(int64(i))
			}
		})
	}
}
