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

// sinkA, sinkB keep loaded values alive.
var sinkA, sinkB uint64

// skipUnless skips a baseline whose instructions the CPU lacks.
func skipUnless(b *testing.B, p path128.Path) {
	if !slices.Contains(path128.Supported(), p) {
		b.Skip("CPU lacks the instructions")
	}
	b.ReportAllocs()
}

func benchPaths(b *testing.B, f func(b *testing.B, x *Uint64Pair)) {
	for _, p := range path128.Supported() {
		b.Run("typed/"+p.String(), func(b *testing.B) {
			usePath(b, p)
			b.ReportAllocs()
			f(b, new(Uint64Pair))
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	benchPaths(b, func(b *testing.B, x *Uint64Pair) {
		var s1, s2 uint64
		for b.Loop() {
			v1, v2 := x.Load()
			s1 += v1
			s2 += v2
		}
		sinkA, sinkB = s1, s2
	})
	benchBaselines(b, "Load")
	b.Run("sync-atomic-Uint64", func(b *testing.B) {
		var u atomic.Uint64
		var s uint64
		for b.Loop() {
			s += u.Load()
		}
		sinkA = s
	})
}

func BenchmarkStore(b *testing.B) {
	benchPaths(b, func(b *testing.B, x *Uint64Pair) {
		var i uint64
		for b.Loop() {
			i++
			x.Store(i, i)
		}
	})
	benchBaselines(b, "Store")
	b.Run("sync-atomic-Uint64", func(b *testing.B) {
		var u atomic.Uint64
		var i uint64
		for b.Loop() {
			i++
			u.Store(i)
		}
	})
}

func BenchmarkSwap(b *testing.B) {
	benchPaths(b, func(b *testing.B, x *Uint64Pair) {
		var i, s uint64
		for b.Loop() {
			i++
			v1, _ := x.Swap(i, i)
			s += v1
		}
		sinkA = s
	})
	benchBaselines(b, "Swap")
	b.Run("sync-atomic-Uint64", func(b *testing.B) {
		var u atomic.Uint64
		var i, s uint64
		for b.Loop() {
			i++
			s += u.Swap(i)
		}
		sinkA = s
	})
}

// BenchmarkCompareAndSwap: every CAS succeeds (the expected pair is known).
func BenchmarkCompareAndSwap(b *testing.B) {
	benchPaths(b, func(b *testing.B, x *Uint64Pair) {
		var i uint64
		for b.Loop() {
			if !x.CompareAndSwap(i, i, i+1, i+1) {
				b.Fatal("CompareAndSwap failed")
			}
			i++
		}
	})
	benchBaselines(b, "CompareAndSwap")
	b.Run("sync-atomic-Uint64", func(b *testing.B) {
		var u atomic.Uint64
		var i uint64
		for b.Loop() {
			u.CompareAndSwap(i, i+1)
			i++
		}
	})
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

// paired measures two loops in alternating chunks of chunkOps operations,
// so both see the same machine load, and reports each one's ns/op and their
// ratio ("x" = a's time over base's). On a shared, noisy machine the ratio
// is far steadier than ns/op figures from separate benchmarks. Each loop
// function runs n operations with direct calls; only the per-chunk call is
// indirect.
func paired(b *testing.B, a, base func(n int)) {
	const chunkOps = 512
	var ta, tbase time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i += chunkOps {
		t0 := time.Now()
		if i/chunkOps%2 == 0 {
			a(chunkOps)
			t1 := time.Now()
			base(chunkOps)
			ta += t1.Sub(t0)
			tbase += time.Since(t1)
		} else {
			base(chunkOps)
			t1 := time.Now()
			a(chunkOps)
			tbase += t1.Sub(t0)
			ta += time.Since(t1)
		}
	}
	ops := float64((b.N + chunkOps - 1) / chunkOps * chunkOps)
	b.ReportMetric(float64(ta.Nanoseconds())/ops, "ns/a-op")
	b.ReportMetric(float64(tbase.Nanoseconds())/ops, "ns/base-op")
	b.ReportMetric(float64(ta)/float64(tbase), "x")
	b.ReportMetric(0, "ns/op")
}
