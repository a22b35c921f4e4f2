package stress

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Hammer runs op in a loop on each of goroutines goroutines for about d,
// under Pressure, with runtime.Gosched mixed in at random, and returns the
// first error an op reported. Each goroutine gets its own seeded generator
// and its index.
func Hammer(d time.Duration, goroutines int, seed uint64, op func(r *rand.Rand, g int) error) error {
	stop := Pressure()
	defer stop()
	var (
		done  atomic.Bool
		first atomic.Pointer[error]
		wg    sync.WaitGroup
	)
	timer := time.AfterFunc(d, func() { done.Store(true) })
	defer timer.Stop()
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(g)))
			for !done.Load() {
				for range 32 {
					if err := op(r, g); err != nil {
						first.CompareAndSwap(nil, &err)
						done.Store(true)
						return
					}
					if r.Uint32()&15 == 0 {
						runtime.Gosched()
					}
				}
			}
		}()
	}
	wg.Wait()
	if e := first.Load(); e != nil {
		return *e
	}
	return nil
}

// conserved is the sum every pair of a conservation run keeps.
const conserved = 0x9e3779b97f4a7c15

// Conservation moves random amounts between the halves of each cell with
// CompareAndSwap, Swap and Store, all of which keep v1+v2 == conserved, and
// checks the sum on every Load and on every old pair Swap returns. A torn
// read or a half-applied write breaks the sum.
func Conservation(cells []Pair, d time.Duration, goroutines int, seed uint64) error {
	for i, c := range cells {
		c.Store(uint64(i), conserved-uint64(i))
	}
	check := func(what string, a, b uint64) error {
		if a+b != conserved {
			return fmt.Errorf("conservation: %s saw (%#x, %#x): sum %#x, want %#x", what, a, b, a+b, uint64(conserved))
		}
		return nil
	}
	return Hammer(d, goroutines, seed, func(r *rand.Rand, _ int) error {
		c := cells[r.IntN(len(cells))]
		x := r.Uint64()
		switch r.IntN(8) {
		case 0:
			a, b := c.Swap(x, conserved-x)
			return check("Swap", a, b)
		case 1:
			c.Store(x, conserved-x)
			return nil
		default:
			a, b := c.Load()
			if err := check("Load", a, b); err != nil {
				return err
			}
			c.CompareAndSwap(a, b, a-x, b+x)
			return nil
		}
	})
}

// mix is splitmix64's finalizer: the second half of a counter cell is
// mix(first half), so a torn pair is caught on sight.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// NoLostUpdate increments counters (k, mix(k)) with CompareAndSwap loops,
// each goroutine counting its own successful increments per cell, and
// checks at the end that every cell holds the sum of the successes: a CAS
// that reported success without being the only writer of its step loses an
// increment. Every Load also checks the pair is not torn.
func NoLostUpdate(cells []Pair, d time.Duration, goroutines int, seed uint64) error {
	for _, c := range cells {
		c.Store(0, mix(0))
	}
	counts := make([][]uint64, goroutines)
	for g := range counts {
		counts[g] = make([]uint64, len(cells))
	}
	err := Hammer(d, goroutines, seed, func(r *rand.Rand, g int) error {
		i := r.IntN(len(cells))
		c := cells[i]
		for {
			k, m := c.Load()
			if m != mix(k) {
				return fmt.Errorf("no lost update: torn Load (%#x, %#x)", k, m)
			}
			if c.CompareAndSwap(k, m, k+1, mix(k+1)) {
				counts[g][i]++
				return nil
			}
		}
	})
	if err != nil {
		return err
	}
	for i, c := range cells {
		var want uint64
		for g := range counts {
			want += counts[g][i]
		}
		k, m := c.Load()
		if k != want || m != mix(k) {
			return fmt.Errorf("no lost update: cell %d holds (%d, %#x) after %d successful increments", i, k, m, want)
		}
	}
	return nil
}

// NoTornRead has writers Store and Swap random pairs (x, ^x), where every
// bit of both halves changes between values, and readers check b == ^a on
// every Load, every Swap result, and after every CompareAndSwap from a
// loaded pair.
func NoTornRead(cells []Pair, d time.Duration, goroutines int, seed uint64) error {
	for _, c := range cells {
		c.Store(0, ^uint64(0))
	}
	check := func(what string, a, b uint64) error {
		if b != ^a {
			return fmt.Errorf("no torn read: %s saw (%#x, %#x)", what, a, b)
		}
		return nil
	}
	return Hammer(d, goroutines, seed, func(r *rand.Rand, _ int) error {
		c := cells[r.IntN(len(cells))]
		x := r.Uint64()
		switch r.IntN(4) {
		case 0:
			c.Store(x, ^x)
			return nil
		case 1:
			a, b := c.Swap(x, ^x)
			return check("Swap", a, b)
		case 2:
			a, b := c.Load()
			if err := check("Load", a, b); err != nil {
				return err
			}
			c.CompareAndSwap(a, b, x, ^x)
			return nil
		default:
			a, b := c.Load()
			return check("Load", a, b)
		}
	})
}
