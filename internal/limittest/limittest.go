// Package limittest holds the checks and benchmark loops that the tests of
// several limiters share. It is imported by tests only.
package limittest

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/cellrate/cellrate/limit"
)

// WantErr returns the error AllowNAt must return for n units when at most
// most can ever be admitted.
func WantErr(n, most int64) error {
	switch {
	case n < 0:
		return limit.ErrNegativeCost
	case n > most:
		return limit.ErrCostExceedsBurst
	}
	return nil
}

// RaceAt has workers goroutines take units from l at the one instant now,
// 1, 2 or 3 at a time (by worker) and then one at a time, until not even
// one unit fits; it returns the units they took in all. However the
// compare-and-swaps interleave, the total must be what a sequential limiter
// admits one unit at a time, if costs add up exactly.
func RaceAt(l limit.Limiter, now int64, workers int) int64 {
	var got atomic.Int64
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for {
				n := int64(1 + g%3)
				r, err := l.AllowNAt(now, n)
				if err != nil {
					panic(err)
				}
				if !r.OK {
					if n == 1 || !l.AllowAt(now) {
						return
					}
					n = 1
				}
				got.Add(n)
			}
		})
	}
	wg.Wait()
	return got.Load()
}

// Serial benchmarks allow on one goroutine, the time advancing by step ns
// per call. On Linux it also reports cpu-ns/op, the CPU time of its
// (locked) thread per call, which other processes on a busy machine do not
// inflate as they do the wall-clock ns/op.
func Serial(b *testing.B, allow func(int64) bool, step int64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	now := int64(time.Hour)
	b.ReportAllocs()
	c0 := threadCPU()
	for b.Loop() {
		now += step
		allow(now)
	}
	if haveCPUTime {
		b.ReportMetric(float64(threadCPU()-c0)/float64(b.N), "cpu-ns/op")
	}
}

// Parallel benchmarks allow on all Ps, with a shared clock that each
// goroutine reads every 64 calls, as a cached clock would be read. On Linux
// it also reports cpu-ns/op, the process's CPU time per call.
func Parallel(b *testing.B, allow func(int64) bool) {
	var clock atomic.Int64
	clock.Store(int64(time.Hour))
	b.ReportAllocs()
	c0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		var now int64
		for i := 0; pb.Next(); i++ {
			if i&63 == 0 {
				now = clock.Add(64000)
			}
			allow(now)
		}
	})
	if haveCPUTime {
		b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
	}
}

// OwnLine fails t unless the field at [off, off+size) of a struct of
// structSize bytes has a whole cache line of padding on each side, after
// the fields that end at prevEnd: so the cache-coherence traffic of writing
// that field never evicts the read-mostly fields beside it, nor a
// neighbouring object's.
func OwnLine(t *testing.T, name string, structSize, prevEnd, off, size uintptr) {
	t.Helper()
	line := unsafe.Sizeof(cpu.CacheLinePad{})
	if off < prevEnd+line || structSize < off+size+line {
		t.Errorf("%s at [%d, %d) of %d bytes after fields ending at %d: want %d bytes of padding on each side",
			name, off, off+size, structSize, prevEnd, line)
	}
	t.Logf("%s: %d bytes, hot field at [%d, %d)", name, structSize, off, off+size)
}

// DenialsWriteNothing checks l, a copy made by ReadOnly that is full at
// deniedAt: AllowAt and AllowNAt of each cost there must deny without a
// store to its memory (a failed compare-and-swap stores too), and an
// AllowAt at admittedAt must store, or the check proves nothing.
func DenialsWriteNothing(t *testing.T, l limit.Limiter, deniedAt, admittedAt int64, costs ...int64) {
	t.Helper()
	check := func(what string, f func() bool) {
		t.Helper()
		var ok bool
		if Faults(func() { ok = f() }) {
			t.Errorf("a denying %s wrote the limiter", what)
		} else if ok {
			t.Errorf("%s admitted at %d on a full limiter", what, deniedAt)
		}
	}
	check("AllowAt", func() bool { return l.AllowAt(deniedAt) })
	for _, n := range costs {
		check(fmt.Sprintf("AllowNAt(%d)", n), func() bool { r, _ := l.AllowNAt(deniedAt, n); return r.OK })
	}
	if !Faults(func() { l.AllowAt(admittedAt) }) {
		t.Fatal("an admission did not fault: the limiter's memory is writable")
	}
}
