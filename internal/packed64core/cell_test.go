package packed64core

import (
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/cellrate/cellrate/internal/limittest"
	"github.com/cellrate/cellrate/internal/slide"
	"github.com/cellrate/cellrate/limit"
)

func TestZeroAllocs(t *testing.T) {
	b, _ := NewBucket(1000, time.Second, 100)
	c, _ := NewWindow(1000, time.Second)
	now := int64(0)
	if a := testing.AllocsPerRun(1000, func() {
		now += 1000
		b.AllowAt(now)
		_, _ = b.AllowNAt(now, 2)
		_ = b.TokensAt(now)
		c.AllowAt(now)
		_, _ = c.AllowNAt(now, 2)
		_ = c.EstimateAt(now)
	}); a != 0 {
		t.Fatalf("%v allocations per run", a)
	}
}

// TestSizes reports the bytes per limiter for the README's memory table and
// fails if a word stops being 8 bytes or shares its cache line.
func TestSizes(t *testing.T) {
	if unsafe.Sizeof(BucketWord(0)) != 8 || unsafe.Sizeof(WindowWord(0)) != 8 {
		t.Fatal("a word is not 8 bytes")
	}
	var b bucketCell
	limittest.OwnLine(t, "Bucket", unsafe.Sizeof(b), unsafe.Offsetof(b.p)+unsafe.Sizeof(b.p), unsafe.Offsetof(b.word), 8)
	var w windowCell
	limittest.OwnLine(t, "Window", unsafe.Sizeof(w), unsafe.Offsetof(w.p)+unsafe.Sizeof(w.p), unsafe.Offsetof(w.word), 8)
	t.Logf("word 8 bytes; Bucket %d bytes (BucketParams %d), Window %d bytes (WindowParams %d), HighWater %d",
		unsafe.Sizeof(Bucket{}), unsafe.Sizeof(BucketParams{}), unsafe.Sizeof(Window{}), unsafe.Sizeof(WindowParams{}),
		unsafe.Sizeof(HighWater{}))
}

func TestHighWater(t *testing.T) {
	var h HighWater
	h.Raise(100, 10)
	h.Raise(50, 10) // never lowers the mark
	h.Raise(105, 10)
	if got := h.Ref(10); got != 110 {
		t.Fatalf("Ref = %d, want 110", got)
	}
	h.Raise(200, 10)
	if got := h.Ref(0); got != 200 {
		t.Fatalf("Ref = %d, want 200", got)
	}
}

func BenchmarkBucketAllowAt(b *testing.B) {
	l, _ := NewBucket(3_000_000, time.Second, 1000)
	limittest.Serial(b, l.AllowAt, 1000)
}

func BenchmarkBucketAllowAtDenied(b *testing.B) {
	l, _ := NewBucket(1, time.Hour, 1)
	l.AllowAt(int64(time.Hour))
	limittest.Serial(b, l.AllowAt, 1)
}

func BenchmarkBucketAllowNAt(b *testing.B) {
	l, _ := NewBucket(3_000_000, time.Second, 1000)
	limittest.Serial(b, func(now int64) bool { r, _ := l.AllowNAt(now, 2); return r.OK }, 1000)
}

func BenchmarkBucketAllowAtParallel(b *testing.B) {
	l, _ := NewBucket(3_000_000, time.Second, 1000)
	limittest.Parallel(b, l.AllowAt)
}

func BenchmarkBucketsAllowAt(b *testing.B) {
	t, _ := NewBuckets(1<<20, 3_000_000, time.Second, 1000)
	i := 0
	limittest.Serial(b, func(now int64) bool { i = (i + 40503) & (1<<20 - 1); return t.AllowAt(i, now) }, 1000)
}

func BenchmarkWindowAllowAt(b *testing.B) {
	l, _ := NewWindow(MaxWindowLimit, time.Millisecond)
	limittest.Serial(b, l.AllowAt, 1000)
}

func BenchmarkWindowAllowAtDenied(b *testing.B) {
	l, _ := NewWindow(100, time.Hour)
	for l.AllowAt(int64(time.Hour)) {
	}
	limittest.Serial(b, l.AllowAt, 1)
}

func BenchmarkWindowAllowAtParallel(b *testing.B) {
	l, _ := NewWindow(MaxWindowLimit, time.Millisecond)
	limittest.Parallel(b, l.AllowAt)
}

// TestTables: every slot of a table behaves as its own limiter, and a
// table takes 8 bytes per limiter.
func TestTables(t *testing.T) {
	var pe *limit.ParamError
	if _, err := NewBuckets(0, 1, time.Second, 1); !errors.As(err, &pe) || pe.Param != "count" || pe.Value != 0 || pe.Min != 1 {
		t.Fatalf("NewBuckets(0, ...) error %v", err)
	}
	if _, err := NewWindows(-1, 1, time.Second); !errors.As(err, &pe) || pe.Param != "count" || pe.Value != -1 {
		t.Fatalf("NewWindows(-1, ...) error %v", err)
	}
	if _, err := NewWindows(1, 1, time.Second, WithClock(nil)); !errors.As(err, &pe) || pe.Param != "clock" {
		t.Fatalf("NewWindows(WithClock(nil)) error %v", err)
	}
	if _, err := NewWindows(1, 0, time.Second); err == nil {
		t.Fatal("NewWindows accepted limit 0")
	}
	const count = 1000
	bs, _ := NewBuckets(count, 10, time.Second, 3)
	ws, _ := NewWindows(count, 3, time.Second)
	one, _ := NewBucket(10, time.Second, 3)
	win, _ := NewWindow(3, time.Second)
	rng := rand.New(rand.NewPCG(23, 24))
	now := int64(time.Hour)
	for range 20000 {
		now += rng.Int64N(int64(time.Millisecond))
		i := 7 + rng.IntN(2) // two busy slots; slot 7 mirrors the single limiters
		n := 1 + rng.Int64N(3)
		rb, _ := bs.AllowNAt(i, now, n)
		rw, _ := ws.AllowNAt(i, now, n)
		if i == 7 {
			if wb, _ := one.AllowNAt(now, n); wb != rb {
				t.Fatalf("table bucket %+v, single %+v", rb, wb)
			}
			if ww, _ := win.AllowNAt(now, n); ww != rw {
				t.Fatalf("table window %+v, single %+v", rw, ww)
			}
		}
	}
	for i := range count {
		if i != 7 && i != 8 && (bs.TokensAt(i, now) != 3 || ws.EstimateAt(i, now) != 0 || !bs.AllowAt(i, now) || !ws.AllowAt(i, now)) {
			t.Fatalf("slot %d was touched", i)
		}
	}
	if s := unsafe.Sizeof(atomic.Uint64{}); s != 8 {
		t.Fatalf("a slot is %d bytes", s)
	}
	t.Logf("Buckets %d + 8 per bucket, Windows %d + 8 per counter", unsafe.Sizeof(Buckets{}), unsafe.Sizeof(Windows{}))
}

// TestWrapDips measures the package doc's cost of wrapping: a word drained
// at its last use and then left idle for a random time of one to a thousand
// wraps is read, with a reference anywhere in [now, now+Slack], as not yet
// refilled (or, for a window, not yet empty) in fewer than
// (Slack + refill) / Wrap of the cases.
func TestWrapDips(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	const reads = 200000
	bp, _ := NewBucketParams(1000, time.Second, 100)
	wp, _ := NewWindowParams(100, time.Second)
	for _, c := range []struct {
		name   string
		wrap   int64
		slack  int64
		bound  float64
		dipped func(written, now, ref int64) bool
	}{
		{"bucket", int64(bp.Wrap()), bp.Slack(), float64(bp.Slack()+int64(time.Second/10)) / float64(bp.Wrap()),
			func(written, now, ref int64) bool {
				w := bp.word(bp.clk.units(written), bp.cap) // drained
				return bp.TokensAt(BucketState{w, ref}, now) < float64(bp.burst)
			}},
		{"window", int64(wp.Wrap()), wp.Slack(), float64(wp.Slack()+2*int64(wp.Window())) / float64(wp.Wrap()),
			func(written, now, ref int64) bool {
				w := wp.word(slide.State{Start: wp.clk.units(written), Cur: wp.r.L}) // full
				return wp.EstimateAt(WindowState{w, ref}, now) > 0
			}},
	} {
		dips := 0
		for range reads {
			written := rng.Int64N(1 << 50)
			now := written + c.wrap*(1+rng.Int64N(1000)) + rng.Int64N(c.wrap)
			if c.dipped(written, now, now+rng.Int64N(c.slack+1)) {
				dips++
			}
		}
		rate := float64(dips) / reads
		t.Logf("%s: wrap %v, %d of %d reads dipped (%.2g; bound %.2g)", c.name, time.Duration(c.wrap), dips, reads, rate, c.bound)
		if rate > c.bound*1.5+3.0/reads {
			t.Errorf("%s: dip rate %.3g above the bound %.3g", c.name, rate, c.bound)
		}
	}
}

func BenchmarkWindowAllowNAt(b *testing.B) {
	l, _ := NewWindow(MaxWindowLimit, time.Millisecond)
	limittest.Serial(b, func(now int64) bool { r, _ := l.AllowNAt(now, 2); return r.OK }, 1000)
}

func BenchmarkBucketTakeRefund(b *testing.B) {
	l, _ := NewBucket(3_000_000, time.Second, 1000)
	limittest.Serial(b, func(now int64) bool { r, rc, _ := l.TakeAt(now, 2); l.Refund(rc); return r.OK }, 1000)
}

func BenchmarkWindowTakeRefund(b *testing.B) {
	l, _ := NewWindow(MaxWindowLimit, time.Millisecond)
	limittest.Serial(b, func(now int64) bool { r, rc, _ := l.TakeAt(now, 2); l.Refund(rc); return r.OK }, 1000)
}
