package packed64

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
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
// fails if a word stops being 8 bytes.
func TestSizes(t *testing.T) {
	if unsafe.Sizeof(BucketWord(0)) != 8 || unsafe.Sizeof(WindowWord(0)) != 8 {
		t.Fatal("a word is not 8 bytes")
	}
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
	now := int64(time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		now += 1000
		l.AllowAt(now)
	}
}

func BenchmarkBucketAllowAtDenied(b *testing.B) {
	l, _ := NewBucket(1, time.Hour, 1)
	now := int64(time.Hour)
	l.AllowAt(now)
	b.ReportAllocs()
	for b.Loop() {
		now++
		l.AllowAt(now)
	}
}

func BenchmarkBucketAllowNAt(b *testing.B) {
	l, _ := NewBucket(3_000_000, time.Second, 1000)
	now := int64(time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		now += 1000
		_, _ = l.AllowNAt(now, 2)
	}
}

func BenchmarkBucketAllowAtParallel(b *testing.B) {
	l, _ := NewBucket(3_000_000, time.Second, 1000)
	parallel(b, l.AllowAt)
}

func BenchmarkWindowAllowAt(b *testing.B) {
	l, _ := NewWindow(MaxWindowLimit, time.Millisecond)
	now := int64(time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		now += 1000
		l.AllowAt(now)
	}
}

func BenchmarkWindowAllowAtDenied(b *testing.B) {
	l, _ := NewWindow(100, time.Hour)
	now := int64(time.Hour)
	for l.AllowAt(now) {
	}
	b.ReportAllocs()
	for b.Loop() {
		now++
		l.AllowAt(now)
	}
}

func BenchmarkWindowAllowAtParallel(b *testing.B) {
	l, _ := NewWindow(MaxWindowLimit, time.Millisecond)
	parallel(b, l.AllowAt)
}

// parallel runs allow on all Ps with a shared clock that each goroutine
// reads every 64 calls, as a cached clock would be.
func parallel(b *testing.B, allow func(int64) bool) {
	var clock atomic.Int64
	clock.Store(int64(time.Hour))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var now int64
		for i := 0; pb.Next(); i++ {
			if i&63 == 0 {
				now = clock.Add(64000)
			}
			allow(now)
		}
	})
}

// TestTables: every slot of a table behaves as its own limiter, and a
// table takes 8 bytes per limiter.
func TestTables(t *testing.T) {
	if _, err := NewBuckets(0, 1, time.Second, 1); err == nil || err.Error() != "packed64: count must be >= 1, got 0" {
		t.Fatalf("NewBuckets(0, ...) error %v", err)
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
