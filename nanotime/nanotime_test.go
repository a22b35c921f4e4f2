package nanotime

import (
	"sync/atomic"
	"testing"
	"time"
	_ "unsafe" // for go:linkname
)

// directNano is the baseline Now is measured against.
//
//go:linkname directNano runtime.nanotime
//go:noescape
func directNano() int64

func TestNowMonotonic(t *testing.T) {
	prev := Now()
	for range 100000 {
		n := Now()
		if n < prev {
			t.Fatalf("Now went backwards: %d after %d", n, prev)
		}
		prev = n
	}
}

// TestNowMeasuresElapsedTime checks Now against the time package's
// monotonic clock: an interval bracketed by two Now calls is at least as
// long as the interval time.Since measured inside it.
func TestNowMeasuresElapsedTime(t *testing.T) {
	a := Now()
	start := time.Now()
	time.Sleep(2 * time.Millisecond)
	inner := time.Since(start)
	b := Now()
	if got := time.Duration(b - a); got < inner {
		t.Fatalf("Now measured %v, shorter than the %v measured inside it", got, inner)
	}
}

func TestNowAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = Now() }); n != 0 {
		t.Fatalf("Now allocates %v times per call", n)
	}
}

func BenchmarkNow(b *testing.B) {
	b.ReportAllocs()
	var s int64
	for b.Loop() {
		s += Now()
	}
	sink = s
}

func BenchmarkRuntimeNanotime(b *testing.B) {
	b.ReportAllocs()
	var s int64
	for b.Loop() {
		s += directNano()
	}
	sink = s
}

func BenchmarkTimeNow(b *testing.B) {
	b.ReportAllocs()
	var s int64
	for b.Loop() {
		s += time.Now().UnixNano()
	}
	sink = s
}

var sink int64

var sink2 atomic.Int64
