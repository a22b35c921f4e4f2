package bench

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/puzpuzpuz/xsync/v4"
	"golang.org/x/sys/cpu"

	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/internal/path128"
	"github.com/cellrate/cellrate/nanotime"
	"github.com/cellrate/cellrate/striped"
)

// goroutines are the concurrency levels of every benchmark: one goroutine
// in a plain loop, then RunParallel with one and eight goroutines per P
// (GoroutineCounts: no count twice, whatever GOMAXPROCS is).
func goroutines() []int { return GoroutineCounts(runtime.GOMAXPROCS(0)) }

// run times op at g goroutines and returns the fraction of calls that
// reported true; op gets a per-goroutine state it may use as an injected
// clock.
func run(b *testing.B, g int, op func(t *int64) bool) float64 {
	b.ReportAllocs()
	var admitted, total atomic.Int64
	if g == 1 {
		var t int64
		n := int64(0)
		for range b.N {
			if op(&t) {
				n++
			}
		}
		admitted.Add(n)
		total.Add(int64(b.N))
	} else {
		b.SetParallelism(Parallelism(g, runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			var n, ops int64
			c := new(paddedClock) // op's &t escapes: keep it off other goroutines' lines
			for pb.Next() {
				if op(&c.t) {
					n++
				}
				ops++
			}
			admitted.Add(n)
			total.Add(ops)
		})
	}
	return float64(admitted.Load()) / float64(max(1, total.Load()))
}

// paddedClock is a goroutine's injected clock on a cache line of its own:
// a plain int64 moves to the heap (op takes its address), where the
// goroutines' clocks sat on one line and every call wrote it.
type paddedClock struct {
	_ cpu.CacheLinePad
	t int64
	_ cpu.CacheLinePad
}

// loads are the two regimes: nearly every call admitted, or nearly every
// call denied.
var loads = []struct {
	name  string
	rate  float64
	burst int64
}{
	{"admit", 1e9, 1e9},
	{"deny", 100, 1},
}

func BenchmarkLimiter(b *testing.B) {
	for _, load := range loads {
		for _, clock := range []string{"clock", "injected"} {
			for _, im := range Impls() {
				if (im.Blocks && load.name == "deny") || !im.Takes(load.rate, load.burst) {
					continue
				}
				for _, g := range goroutines() {
					b.Run(fmt.Sprintf("%s/%s/%s/g=%d", load.name, clock, im.Name, g), func(b *testing.B) {
						l := im.New(load.rate, load.burst)
						op := func(*int64) bool { return l.Allow() }
						if clock == "injected" {
							op = func(t *int64) bool { *t += step; return l.AllowNAt(*t, 1) }
						}
						b.ReportMetric(100*run(b, g, op), "admit%")
					})
				}
			}
		}
	}
}

// A counter is one implementation of a shared event counter.
type counter struct {
	name string
	add  func() func()
}

// counters lists the counters compared.
var counters = []counter{
	{"sync-atomic", func() func() { var c atomic.Int64; return func() { c.Add(1) } }},
	{"xsync-counter", func() func() { c := xsync.NewCounter(); return c.Inc }},
	{"mutex", func() func() {
		var mu sync.Mutex
		var c int64
		return func() { mu.Lock(); c++; mu.Unlock() }
	}},
	{"cellrate-striped", func() func() { c := new(striped.Counter); return func() { c.Add(1) } }},
}

func BenchmarkCounter(b *testing.B) {
	for _, c := range counters {
		for _, g := range goroutines() {
			b.Run(fmt.Sprintf("add/%s/g=%d", c.name, g), func(b *testing.B) {
				add := c.add()
				run(b, g, func(*int64) bool { add(); return true })
			})
		}
	}
}

// mutexPair is the lock-based 128-bit cell atomic128 replaces.
type mutexPair struct {
	mu   sync.Mutex
	a, b uint64
}

// pairInc is a 128-bit CAS-loop increment on an atomic128 cell.
func pairInc() func() {
	var p atomic128.Uint64Pair
	return func() {
		for {
			x, y := p.Load()
			if p.CompareAndSwap(x, y, x+1, y-1) {
				return
			}
		}
	}
}

func BenchmarkPair(b *testing.B) {
	for _, path := range path128.Supported() {
		for _, g := range goroutines() {
			b.Run(fmt.Sprintf("cas-inc/atomic128-%v/g=%d", path, g), func(b *testing.B) {
				prev := path128.Active
				if err := path128.Force(path); err != nil {
					b.Fatal(err)
				}
				defer func() { path128.Active = prev }()
				inc := pairInc()
				run(b, g, func(*int64) bool { inc(); return true })
			})
		}
	}
	pairs := []struct {
		name string
		inc  func() func()
	}{
		{"mutex-pair", func() func() {
			var p mutexPair
			return func() { p.mu.Lock(); p.a++; p.b--; p.mu.Unlock() }
		}},
		{"sync-atomic-64", func() func() {
			var p atomic.Uint64
			return func() {
				for {
					x := p.Load()
					if p.CompareAndSwap(x, x+1) {
						return
					}
				}
			}
		}},
	}
	for _, p := range pairs {
		for _, g := range goroutines() {
			b.Run(fmt.Sprintf("cas-inc/%s/g=%d", p.name, g), func(b *testing.B) {
				inc := p.inc()
				run(b, g, func(*int64) bool { inc(); return true })
			})
		}
	}
}

var sinkTime int64

func BenchmarkClock(b *testing.B) {
	start := time.Now()
	var coarse nanotime.Coarse
	clocks := []struct {
		name string
		now  func() int64
	}{
		{"nanotime", nanotime.Now},
		{"nanotime-coarse", coarse.Now},
		{"nanotime-since", nanotime.Since()},
		{"time-now", func() int64 { return time.Now().UnixNano() }},
		{"time-since", func() int64 { return int64(time.Since(start)) }},
	}
	for _, c := range clocks {
		b.Run("read/"+c.name+"/g=1", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				sinkTime += c.now()
			}
		})
	}
}
