package striped

import (
	"math/big"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// setGOMAXPROCS sets GOMAXPROCS for the rest of the test and restores the
// previous value when it ends.
func setGOMAXPROCS(t testing.TB, n int) {
	prev := runtime.GOMAXPROCS(n)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
}

// wrap64 reduces a big sum to the int64 that wrapping int64 addition gives.
func wrap64(x *big.Int) int64 {
	m := new(big.Int).Lsh(big.NewInt(1), 64)
	r := new(big.Int).Mod(x, m)
	return int64(r.Uint64())
}

func TestCounterZeroValue(t *testing.T) {
	var c Counter
	if got := c.Load(); got != 0 {
		t.Fatalf("zero Counter Load = %d, want 0", got)
	}
	c.Add(-3)
	if got := c.Load(); got != -3 {
		t.Fatalf("after Add(-3) Load = %d, want -3", got)
	}
}

func TestCounterSequentialMatchesBigSum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var c Counter
	want := new(big.Int)
	for i := range 5000 {
		var n int64
		switch i % 4 {
		case 0:
			n = r.Int64() // large values make the cells wrap
		case 1:
			n = -r.Int64()
		default:
			n = r.Int64N(1000) - 500
		}
		c.Add(n)
		want.Add(want, big.NewInt(n))
		if got := c.Load(); got != wrap64(want) {
			t.Fatalf("after %d adds Load = %d, want %d", i+1, got, wrap64(want))
		}
	}
}

// TestCounterConcurrentExact checks that no Add is lost: once every adder
// has finished, Load is the exact sum.
func TestCounterConcurrentExact(t *testing.T) {
	goroutines, adds := 8, 20000
	if testing.Short() {
		adds = 2000
	}
	var c Counter
	var wg sync.WaitGroup
	sums := make([]int64, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for range adds {
				n := r.Int64N(1<<20) - 1<<19
				c.Add(n)
				sums[g] += n
			}
		})
	}
	wg.Wait()
	var want int64
	for _, s := range sums {
		want += s
	}
	if got := c.Load(); got != want {
		t.Fatalf("Load = %d after all adds, want %d (lost %d)", got, want, want-got)
	}
}

// checkLoadBounds runs adders of positive amounts while a loader checks
// that every Load lies between the total of the Adds completed before it
// began and the total of the Adds begun before it returned. change, if not
// nil, runs concurrently until the adders stop.
func checkLoadBounds(t *testing.T, adders int, dur time.Duration, change func(stop <-chan struct{})) {
	var c Counter
	var started, done atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range adders {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 11))
			for {
				select {
				case <-stop:
					return
				default:
				}
				for range 64 {
					n := 1 + r.Int64N(100)
					started.Add(n)
					c.Add(n)
					done.Add(n)
				}
			}
		})
	}
	if change != nil {
		wg.Go(func() { change(stop) })
	}
	loads := 0
	for deadline := time.Now().Add(dur); time.Now().Before(deadline); loads++ {
		lo := done.Load()
		v := c.Load()
		// started is read after Load: every Add that Load saw had already
		// added to started. (The adder's plain cell write follows its atomic
		// add to started; x86, LSE arm64 and the race build's atomic adds
		// all keep that order visible. A non-LSE arm64 CPU could show the
		// cell write first and fail this check spuriously.)
		hi := started.Load()
		if v < lo || v > hi {
			close(stop)
			wg.Wait()
			t.Fatalf("Load = %d, want within [%d, %d] (completed before, begun before return)", v, lo, hi)
		}
	}
	close(stop)
	wg.Wait()
	if got, want := c.Load(), done.Load(); got != want {
		t.Fatalf("quiescent Load = %d, want %d", got, want)
	}
	if loads == 0 {
		t.Fatal("no Load ran")
	}
}

func TestCounterLoadBounds(t *testing.T) {
	dur := 300 * time.Millisecond
	if testing.Short() {
		dur = 50 * time.Millisecond
	}
	checkLoadBounds(t, 4, dur, nil)
}

// TestCounterGOMAXPROCSChanges changes GOMAXPROCS up and down while Adds
// and Loads run: no index goes out of range, no Add is lost, the bounds
// hold, and the cells grow to cover the largest P count.
func TestCounterGOMAXPROCSChanges(t *testing.T) {
	setGOMAXPROCS(t, 1)
	dur := 400 * time.Millisecond
	if testing.Short() {
		dur = 80 * time.Millisecond
	}
	checkLoadBounds(t, 6, dur, func(stop <-chan struct{}) {
		cycleGOMAXPROCS(stop, 3, 1, 8, 2, 16, 5, 1, 12)
	})
}

// cycleGOMAXPROCS sets GOMAXPROCS to each of procs in turn, a millisecond
// apart, until stop is closed. The test must restore it (setGOMAXPROCS).
func cycleGOMAXPROCS(stop <-chan struct{}, procs ...int) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		runtime.GOMAXPROCS(procs[i%len(procs)])
		time.Sleep(time.Millisecond)
	}
}

func TestCounterGrowsWithGOMAXPROCS(t *testing.T) {
	setGOMAXPROCS(t, 1)
	var c Counter
	c.Add(1)
	if n := len(c.cells.all()); n != 1 {
		t.Fatalf("cells at GOMAXPROCS 1 = %d, want 1", n)
	}
	runtime.GOMAXPROCS(4)
	// Add from many goroutines until one runs on a P above 0.
	deadline := time.Now().Add(10 * time.Second)
	for len(c.cells.all()) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("cells = %d after GOMAXPROCS(4), want 4", len(c.cells.all()))
		}
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() { c.Add(1) })
		}
		wg.Wait()
	}
	runtime.GOMAXPROCS(1)
	before := c.Load()
	c.Add(1)
	if got := c.Load(); got != before+1 {
		t.Fatalf("after shrinking GOMAXPROCS Load = %d, want %d (cells of dropped Ps must still count)", got, before+1)
	}
}

// TestPerPGrowKeepsSlots races growers of random sizes and checks the
// append-only rule: each index keeps the slot first published for it.
func TestPerPGrowKeepsSlots(t *testing.T) {
	var p perP[cell]
	const maxPid = 200
	seen := make([][]*cell, 16)
	var wg sync.WaitGroup
	for g := range seen {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 3))
			mine := make([]*cell, maxPid)
			for range 300 {
				pid := r.IntN(maxPid)
				p.grow(pid)
				x := p.get(pid)
				if x == nil {
					t.Errorf("get(%d) = nil after grow(%d)", pid, pid)
					return
				}
				if mine[pid] != nil && mine[pid] != x {
					t.Errorf("slot %d moved", pid)
					return
				}
				mine[pid] = x
			}
			seen[g] = mine
		})
	}
	wg.Wait()
	final := p.all()
	for g, mine := range seen {
		for pid, x := range mine {
			if x != nil && final[pid] != x {
				t.Fatalf("goroutine %d used slot %d at %p; final table has %p", g, pid, x, final[pid])
			}
		}
	}
}

func TestCellLayout(t *testing.T) {
	for name, s := range map[string]uintptr{"cell": unsafe.Sizeof(cell{}), "cache": unsafe.Sizeof(cache{})} {
		if s%lineSize != 0 || s == 0 {
			t.Fatalf("%s is %d bytes, want a multiple of the %d-byte line", name, s, lineSize)
		}
	}
	for k := 1; k <= 33; k++ {
		b := alignedBlock[cell](k)
		if len(b) != k {
			t.Fatalf("alignedBlock(%d) has %d cells", k, len(b))
		}
		for i := range b {
			if a := uintptr(unsafe.Pointer(&b[i])); a%lineSize != 0 {
				t.Fatalf("alignedBlock(%d)[%d] at %#x, not %d-byte aligned", k, i, a, lineSize)
			}
		}
	}
}

func TestCounterAddAllocs(t *testing.T) {
	var c Counter
	c.Add(1)
	if a := testing.AllocsPerRun(1000, func() { c.Add(1) }); a != 0 {
		t.Fatalf("Add allocates %v times a call", a)
	}
	if a := testing.AllocsPerRun(1000, func() { _ = c.Load() }); a != 0 {
		t.Fatalf("Load allocates %v times a call", a)
	}
}

// withCPU runs bench and reports the process's CPU time per op beside
// ns/op: on a machine shared with other work, ns/op at -cpu 2 measures how
// much of the two cores the run got; cpu-ns/op measures the cost of an
// operation, which contention on a shared line raises.
func withCPU(b *testing.B, bench func()) {
	c0 := processCPU()
	bench()
	if c1 := processCPU(); c0 != 0 && b.N > 0 {
		b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkCounterAdd(b *testing.B) {
	var c Counter
	b.ReportAllocs()
	withCPU(b, func() {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c.Add(1)
			}
		})
	})
}

// The floor of Counter.Add, the least a per-P add can cost: pin the P, a
// plain add to the P's own line (an atomic one where Add makes one: under
// -race, on 32-bit platforms), unpin, written out in the benchmark loop
// (a function holding it would not inline: it makes two calls).

// BenchmarkCounterAddFloor: the floor in the shape of BenchmarkCounterAdd.
func BenchmarkCounterAddFloor(b *testing.B) {
	lines := alignedBlock[cell](runtime.GOMAXPROCS(0))
	withCPU(b, func() {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				pid := procPin()
				if plainAdd {
					lines[pid].n++
				} else {
					atomic.AddInt64(&lines[pid].n, 1)
				}
				procUnpin()
			}
		})
	})
}

// BenchmarkCounterAddRatio measures Counter.Add against the floor beside it:
// every goroutine alternates chunks of each, timing both, and the x column
// is the median over chunk pairs of Add's time over the floor's (on a
// shared machine far steadier than ns/op of separate benchmarks):
//
//	go test ./striped -run '^$' -bench CounterAddRatio -count 5
func BenchmarkCounterAddRatio(b *testing.B) {
	const chunk = 256
	var c Counter
	lines := alignedBlock[cell](runtime.GOMAXPROCS(0))
	var mu sync.Mutex
	var ratios []float64
	b.RunParallel(func(pb *testing.PB) {
		var local []float64
		for i := 0; ; i++ {
			var d [2]time.Duration
			for k := range 2 {
				t0 := time.Now()
				for range chunk {
					if !pb.Next() {
						mu.Lock()
						ratios = append(ratios, local...)
						mu.Unlock()
						return
					}
					if (k+i)%2 == 0 {
						c.Add(1)
						continue
					}
					pid := procPin()
					if plainAdd {
						lines[pid].n++
					} else {
						atomic.AddInt64(&lines[pid].n, 1)
					}
					procUnpin()
				}
				d[(k+i)%2] = time.Since(t0)
			}
			local = append(local, float64(d[0])/float64(d[1]))
		}
	})
	if len(ratios) > 0 {
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "x")
	}
}

// BenchmarkAtomicInt64Add is the baseline: one sync/atomic.Int64 that every
// goroutine adds to.
func BenchmarkAtomicInt64Add(b *testing.B) {
	var c atomic.Int64
	b.ReportAllocs()
	withCPU(b, func() {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c.Add(1)
			}
		})
	})
}

func BenchmarkCounterLoad(b *testing.B) {
	var c Counter
	c.Add(1)
	b.ReportAllocs()
	for b.Loop() {
		_ = c.Load()
	}
}
