package atomic128

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/path128"
)

// The benchmarks run the typed API on every path the CPU supports beside the
// floors in baselines_*_test.go (bare instructions, the raw asm routines)
// and sync/atomic's 64-bit equivalents, all in one run so ratios compare
// like with like:
//
//	go test ./atomic128 -run '^$' -bench . -count 6 | benchstat -
//
// BenchmarkRatio (baselines_*_test.go) measures the ratios directly.

// sinkA keeps loaded values alive.
var sinkA uint64

// A floor is a loop of n operations on p, each a direct call of the
// assembly; only the call of the loop itself is indirect.
type floor struct {
	name string
	need path128.Path
	run  func(p *[2]uint64, n int)
}

// floorFor returns the floor of op with the given name.
func floorFor(op, name string) floor {
	for _, f := range floors[op] {
		if f.name == name {
			return f
		}
	}
	panic("no floor " + op + " " + name)
}

// typedLoops are the typed API's loops of n operations on x, with the same
// bodies as the floors' loops. The CompareAndSwap loop always succeeds: it
// knows the pair it expects (the tests check the results, not these loops).
var typedLoops = map[string]func(x *Uint64Pair, n int){
	"Load": func(x *Uint64Pair, n int) {
		var s uint64
		for range n {
			v, _ := x.Load()
			s += v
		}
		sinkA = s
	},
	"Store": func(x *Uint64Pair, n int) {
		for i := range uint64(n) {
			x.Store(i, i)
		}
	},
	"Swap": func(x *Uint64Pair, n int) {
		var s uint64
		for i := range uint64(n) {
			v, _ := x.Swap(i, i)
			s += v
		}
		sinkA = s
	},
	"CompareAndSwap": func(x *Uint64Pair, n int) {
		a, b := x.Load()
		for range n {
			x.CompareAndSwap(a, b, a+1, b)
			a++
		}
	},
}

// syncLoops are sync/atomic's 64-bit equivalents.
var syncLoops = map[string]func(u *atomic.Uint64, n int){
	"Load": func(u *atomic.Uint64, n int) {
		var s uint64
		for range n {
			s += u.Load()
		}
		sinkA = s
	},
	"Store": func(u *atomic.Uint64, n int) {
		for i := range uint64(n) {
			u.Store(i)
		}
	},
	"Swap": func(u *atomic.Uint64, n int) {
		var s uint64
		for i := range uint64(n) {
			s += u.Swap(i)
		}
		sinkA = s
	},
	"CompareAndSwap": func(u *atomic.Uint64, n int) {
		a := u.Load()
		for range n {
			u.CompareAndSwap(a, a+1)
			a++
		}
	},
}

// skipUnless skips a baseline whose instructions the CPU lacks.
func skipUnless(b *testing.B, p path128.Path) {
	if !slices.Contains(path128.Supported(), p) {
		b.Skip("CPU lacks the instructions")
	}
	b.ReportAllocs()
}

// benchOp runs op through the typed API on every supported path, the
// floors, and sync/atomic.
func benchOp(b *testing.B, op string) {
	for _, p := range path128.Supported() {
		b.Run("typed/"+p.String(), func(b *testing.B) {
			usePath(b, p)
			b.ReportAllocs()
			x := new(Uint64Pair)
			b.ResetTimer()
			typedLoops[op](x, b.N)
		})
	}
	for _, f := range floors[op] {
		b.Run(f.name, func(b *testing.B) {
			skipUnless(b, f.need)
			p := new(Uint64Pair).addr()
			b.ResetTimer()
			f.run(p, b.N)
		})
	}
	b.Run("sync-atomic-Uint64", func(b *testing.B) {
		b.ReportAllocs()
		syncLoops[op](new(atomic.Uint64), b.N)
	})
}

func BenchmarkLoad(b *testing.B)           { benchOp(b, "Load") }
func BenchmarkStore(b *testing.B)          { benchOp(b, "Store") }
func BenchmarkSwap(b *testing.B)           { benchOp(b, "Swap") }
func BenchmarkCompareAndSwap(b *testing.B) { benchOp(b, "CompareAndSwap") }

func benchPaths(b *testing.B, f func(b *testing.B, x *Uint64Pair)) {
	for _, p := range path128.Supported() {
		b.Run("typed/"+p.String(), func(b *testing.B) {
			usePath(b, p)
			b.ReportAllocs()
			f(b, new(Uint64Pair))
		})
	}
}

// BenchmarkParallelLoad: readers only, on one shared cell.
func BenchmarkParallelLoad(b *testing.B) {
	benchPaths(b, func(b *testing.B, x *Uint64Pair) {
		b.RunParallel(func(pb *testing.PB) {
			var s uint64
			for pb.Next() {
				v1, _ := x.Load()
				s += v1
			}
			atomic.AddUint64(&sinkA, s)
		})
	})
	b.Run("sync-atomic-Uint64", func(b *testing.B) {
		var u atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			var s uint64
			for pb.Next() {
				s += u.Load()
			}
			atomic.AddUint64(&sinkA, s)
		})
	})
}

// BenchmarkParallelUpdate: the limiter pattern, a load and a CAS retry loop
// incrementing one shared cell from every goroutine.
func BenchmarkParallelUpdate(b *testing.B) {
	benchPaths(b, func(b *testing.B, x *Uint64Pair) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				for {
					a, c := x.Load()
					if x.CompareAndSwap(a, c, a+1, c) {
						break
					}
				}
			}
		})
	})
	b.Run("sync-atomic-Uint64", func(b *testing.B) {
		var u atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				for {
					a := u.Load()
					if u.CompareAndSwap(a, a+1) {
						break
					}
				}
			}
		})
	})
}

// BenchmarkParallelStore and BenchmarkParallelSwap: every goroutine writes
// the one shared cell.
func BenchmarkParallelStore(b *testing.B) {
	benchPaths(b, func(b *testing.B, x *Uint64Pair) {
		b.RunParallel(func(pb *testing.PB) {
			var i uint64
			for pb.Next() {
				i++
				x.Store(i, i)
			}
		})
	})
	b.Run("sync-atomic-Uint64", func(b *testing.B) {
		var u atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			var i uint64
			for pb.Next() {
				i++
				u.Store(i)
			}
		})
	})
}

func BenchmarkParallelSwap(b *testing.B) {
	benchPaths(b, func(b *testing.B, x *Uint64Pair) {
		b.RunParallel(func(pb *testing.PB) {
			var i, s uint64
			for pb.Next() {
				i++
				v, _ := x.Swap(i, i)
				s += v
			}
			atomic.AddUint64(&sinkA, s)
		})
	})
	b.Run("sync-atomic-Uint64", func(b *testing.B) {
		var u atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			var i, s uint64
			for pb.Next() {
				i++
				s += u.Swap(i)
			}
			atomic.AddUint64(&sinkA, s)
		})
	})
}

// A ratio is one case of BenchmarkRatio: loop a against loop base, on a
// CPU that supports path need.
type ratio struct {
	name    string
	need    path128.Path
	a, base func(n int)
}

// typed is the typed API's loop of op on path (supported: skipUnless; the
// path is restored by usePath).
func typed(op string, path path128.Path) func(n int) {
	x := new(Uint64Pair)
	return func(n int) {
		path128.Active = path
		typedLoops[op](x, n)
	}
}

// raw is the floor of op with the given name, on a pair of its own.
func raw(op, name string) func(n int) {
	p := new(Uint64Pair).addr()
	f := floorFor(op, name)
	return func(n int) { f.run(p, n) }
}

// BenchmarkRatio measures the speed targets as ratios in one run (see
// paired), case by case (ratios, in baselines_*_test.go):
//
//	go test ./atomic128 -run '^$' -bench Ratio -count 5
//
// The x column is the median ratio of a's time to base's.
func BenchmarkRatio(b *testing.B) {
	for _, c := range ratios() {
		b.Run(c.name, func(b *testing.B) {
			skipUnless(b, c.need)
			usePath(b, c.need)
			paired(b, c.a, c.base)
		})
	}
}

// paired measures two loops in alternating chunks of chunkOps operations,
// so that both see the same machine load, and reports the medians over
// chunk pairs of each one's ns/op and of their ratio ("x" = a's time over
// base's). On a shared, noisy machine the median ratio of adjacent chunks is
// far steadier than ns/op figures from separate benchmarks. Each loop
// function runs n operations with direct calls; only the per-chunk call is
// indirect.
func paired(b *testing.B, a, base func(n int)) {
	const chunkOps = 512
	pairs := (b.N + chunkOps - 1) / chunkOps
	ta := make([]float64, 0, pairs)
	tbase := make([]float64, 0, pairs)
	ratio := make([]float64, 0, pairs)
	b.ResetTimer()
	for i := range pairs {
		first, second := a, base
		if i%2 == 1 {
			first, second = base, a
		}
		t0 := time.Now()
		first(chunkOps)
		t1 := time.Now()
		second(chunkOps)
		d1, d2 := float64(t1.Sub(t0)), float64(time.Since(t1))
		if i%2 == 1 {
			d1, d2 = d2, d1
		}
		ta = append(ta, d1/chunkOps)
		tbase = append(tbase, d2/chunkOps)
		ratio = append(ratio, d1/d2)
	}
	b.StopTimer()
	b.ReportMetric(median(ta), "ns/a-op")
	b.ReportMetric(median(tbase), "ns/base-op")
	b.ReportMetric(median(ratio), "x")
	b.ReportMetric(0, "ns/op")
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}
