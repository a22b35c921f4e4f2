package atomic128

import (
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/cellrate/cellrate/asm"
	"github.com/cellrate/cellrate/internal/pairtest"
	"github.com/cellrate/cellrate/internal/path128"
)

// TestMatchesReference runs random operations, on edge and random values,
// through a Uint64Pair and through asm's reference functions on a plain
// pair, on every path, and requires the same results.
func TestMatchesReference(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		var x Uint64Pair
		var ref [2]uint64
		for i := 0; i < 20000; i++ {
			a, b := pairtest.Value(r), pairtest.Value(r)
			switch op := r.IntN(5); op {
			case 0, 1:
				o1, o2 := ref[0], ref[1]
				if op == 1 {
					o1, o2 = pairtest.Value(r), pairtest.Value(r)
				}
				if got, want := x.CompareAndSwap(o1, o2, a, b), asm.RefCas(&ref, o1, o2, a, b); got != want {
					t.Fatalf("step %d: CompareAndSwap(%#x, %#x, %#x, %#x) = %v, reference %v", i, o1, o2, a, b, got, want)
				}
			case 2:
				x.Store(a, b)
				asm.RefStore(&ref, a, b)
			case 3:
				g1, g2 := x.Swap(a, b)
				w1, w2 := asm.RefSwap(&ref, a, b)
				if g1 != w1 || g2 != w2 {
					t.Fatalf("step %d: Swap = %#x, %#x; reference %#x, %#x", i, g1, g2, w1, w2)
				}
			}
			g1, g2 := x.Load()
			if w1, w2 := asm.RefLoad(&ref); g1 != w1 || g2 != w2 {
				t.Fatalf("step %d: Load = %#x, %#x; reference %#x, %#x", i, g1, g2, w1, w2)
			}
		}
	})
}

func TestZeroValue(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		var x Uint64Pair
		if a, b := x.Load(); a != 0 || b != 0 {
			t.Fatalf("zero value loads %d, %d", a, b)
		}
		if !x.CompareAndSwap(0, 0, 1, 2) {
			t.Fatal("CompareAndSwap(0, 0, ...) failed on the zero value")
		}
	})
}

// stressGoroutines and stressOps keep the stress within a second or two on
// two cores, -race included.
const (
	stressGoroutines = 8
	stressOps        = 20000
)

// TestInvariantStress: goroutines move (a, b) to (a+1, b-1) by CAS loops.
// a+b never changes, no update is lost, and the final a equals the number
// of successful CompareAndSwaps.
func TestInvariantStress(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		const sum uint64 = 1 << 40
		var x Uint64Pair
		x.Store(0, sum)
		var wins atomic.Uint64
		var wg sync.WaitGroup
		for g := 0; g < stressGoroutines; g++ {
			wg.Go(func() {
				for i := 0; i < stressOps; i++ {
					for {
						a, b := x.Load()
						if a+b != sum {
							t.Errorf("loaded (%d, %d): sum %d, want %d", a, b, a+b, sum)
							return
						}
						if x.CompareAndSwap(a, b, a+1, b-1) {
							wins.Add(1)
							break
						}
					}
				}
			})
		}
		wg.Wait()
		a, b := x.Load()
		if a+b != sum || a != wins.Load() || a != stressGoroutines*stressOps {
			t.Fatalf("final (%d, %d): sum %d (want %d), a %d, successful CAS %d, want %d",
				a, b, a+b, sum, a, wins.Load(), stressGoroutines*stressOps)
		}
	})
}

// TestTornRead: writers store only pairs with hi == ^lo, by Store, Swap and
// CompareAndSwap; every value any operation returns must have that shape.
func TestTornRead(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		var x Uint64Pair
		x.Store(0, ^uint64(0))
		var wg sync.WaitGroup
		check := func(op string, lo, hi uint64) bool {
			if hi != ^lo {
				t.Errorf("%s saw torn pair (%#x, %#x)", op, lo, hi)
				return false
			}
			return true
		}
		for g := 0; g < stressGoroutines; g++ {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 5))
				for i := 0; i < stressOps; i++ {
					v := r.Uint64()
					switch g % 4 {
					case 0:
						x.Store(v, ^v)
					case 1:
						if o1, o2 := x.Swap(v, ^v); !check("Swap", o1, o2) {
							return
						}
					case 2:
						a, b := x.Load()
						if !check("Load", a, b) {
							return
						}
						x.CompareAndSwap(a, b, v, ^v)
					case 3:
						if a, b := x.Load(); !check("Load", a, b) {
							return
						}
					}
				}
			})
		}
		wg.Wait()
	})
}

// TestAlignment runs the operations on pairs at both 16-byte phases a user
// can produce (Go aligns a Uint64Pair to 8 bytes): struct fields after
// odd-sized fields, array and slice elements, heap and stack values. It
// requires that both phases were exercised.
func TestAlignment(t *testing.T) {
	type after struct {
		_ byte
		x Uint64Pair
	}
	type between struct {
		_ [9]byte
		x Uint64Pair
		_ byte
	}
	forEachPath(t, func(t *testing.T) {
		var phases [2]bool
		exercise := func(name string, x *Uint64Pair) {
			t.Helper()
			phases[uintptr(unsafe.Pointer(x))>>3&1] = true
			p := uintptr(unsafe.Pointer(x.addr()))
			if LockFree() && p%16 != 0 || p%8 != 0 {
				t.Fatalf("%s: pair at %#x is misaligned for path %s", name, p, Path())
			}
			x.Store(uint64(p), 7)
			if !x.CompareAndSwap(uint64(p), 7, 1, 2) {
				t.Fatalf("%s: CompareAndSwap of the stored pair failed", name)
			}
			if a, b := x.Swap(3, 4); a != 1 || b != 2 {
				t.Fatalf("%s: Swap returned %d, %d", name, a, b)
			}
			if a, b := x.Load(); a != 3 || b != 4 {
				t.Fatalf("%s: Load returned %d, %d", name, a, b)
			}
		}
		var stack Uint64Pair
		exercise("stack", &stack)
		exercise("heap", new(Uint64Pair))
		var a after
		exercise("struct after a byte", &a.x)
		for i, arr := 0, new([3]between); i < len(arr); i++ {
			exercise("array of structs", &arr[i].x)
		}
		// 24-byte elements alternate between the two phases.
		for i, arr := 0, new([3]Uint64Pair); i < len(arr); i++ {
			exercise("array", &arr[i])
		}
		s := make([]Uint64Pair, 7)
		for i := range s {
			exercise("slice", &s[i])
		}
		// Stack frames of different depths put locals at different offsets.
		var rec func(n int)
		rec = func(n int) {
			var local [2]between
			exercise("stack struct", &local[n%2].x)
			if n > 0 {
				rec(n - 1)
			}
		}
		rec(4)
		if !phases[0] || !phases[1] {
			t.Fatalf("exercised 16-byte phases %v, want both", phases)
		}
	})
}

// TestSize asserts the documented size (24 bytes) and 8-byte alignment on
// every target, so that a pair is always found inside a Uint64Pair and the
// fallback's 64-bit atomics are aligned on 32-bit targets.
func TestSize(t *testing.T) {
	var x Uint64Pair
	if s, a := unsafe.Sizeof(x), unsafe.Alignof(x); s != 24 || a != 8 {
		t.Fatalf("Sizeof = %d, Alignof = %d; documented 24 and 8", s, a)
	}
}

func TestZeroAllocs(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		var x Uint64Pair
		n := testing.AllocsPerRun(100, func() {
			a, b := x.Load()
			x.CompareAndSwap(a, b, a+1, b)
			x.Swap(a, b)
			x.Store(b, a)
		})
		if n != 0 {
			t.Fatalf("%v allocations per run, want 0", n)
		}
	})
}

// TestExpectedPath fails when CELLRATE_EXPECT_PATH names a path other than
// the one selected at start-up: the CPU-model matrix (qemu -cpu ...) uses it
// to prove the dispatch.
func TestExpectedPath(t *testing.T) {
	want := os.Getenv("CELLRATE_EXPECT_PATH")
	if want == "" {
		t.Skip("CELLRATE_EXPECT_PATH not set")
	}
	if got := Path(); got != want {
		t.Fatalf("Path() = %q, want %q (GOARCH %s, supported %v, %s=%q)",
			got, want, runtime.GOARCH, path128.Supported(), path128.EnvVar, os.Getenv(path128.EnvVar))
	}
	if LockFree() != (want != "fallback") {
		t.Fatalf("LockFree() = %v on path %q", LockFree(), want)
	}
}

// TestEnvPath fails when CELLRATE_ATOMIC128_PATH asked for a path that was
// refused.
func TestEnvPath(t *testing.T) {
	if path128.EnvErr != nil {
		t.Fatal(path128.EnvErr)
	}
}
