package atomic128

import (
	"sync/atomic"
	"testing"

	"github.com/cellrate/cellrate/internal/limittest"
)

// The seqlock's three rules, each tested without timing: a reader rejects
// what it read when a writer took the stripe after its first sequence read,
// every operation waits while a stripe is held, and a writer stores the data
// before it releases the stripe. Each test fails on the first run when its
// rule is broken (checked by planting each bug by hand).

// TestFallbackReadRechecks drives readTry with the sequence a reader read
// before a write: the re-check must reject the pair in both cases, a write
// that completed (the reader would return a value it cannot linearize
// before its sequence read) and a write under way (the reader would return a
// torn pair).
func TestFallbackReadRechecks(t *testing.T) {
	var x Uint64Pair
	p := x.addr()
	seq := seqFor(p)
	fallbackStore(p, 1, ^uint64(1))

	s := seq.Load()
	if v1, v2, ok := readTry(seq, s, p); !ok || v1 != 1 || v2 != ^uint64(1) {
		t.Fatalf("undisturbed read = %#x, %#x, %v; want 1, ^1, true", v1, v2, ok)
	}

	fallbackStore(p, 2, ^uint64(2))
	if v1, v2, ok := readTry(seq, s, p); ok {
		t.Fatalf("read with a sequence from before a write accepted (%#x, %#x)", v1, v2)
	}

	s = seq.Load()
	odd := lockWrite(seq)
	atomic.StoreUint64(&p[0], 3) // half of a write of (3, ^3)
	v1, v2, ok := readTry(seq, s, p)
	atomic.StoreUint64(&p[1], ^uint64(3))
	seq.Store(odd + 1)
	if ok {
		t.Fatalf("read overlapping a write accepted the torn pair (%#x, %#x)", v1, v2)
	}

	if _, _, ok := readTry(seq, odd, p); ok {
		t.Fatal("read under an odd sequence (a writer holding the stripe) accepted")
	}
	if v1, v2 := fallbackLoad(p); v1 != 3 || v2 != ^uint64(3) {
		t.Fatalf("fallbackLoad = %#x, %#x after the write; want 3, ^3", v1, v2)
	}
}

// TestFallbackWaitsForLockedStripe locks a pair's stripe by hand, half
// writes the pair, and runs each operation on it in a goroutine: the
// operation must wait (waitHook runs, with the waits counted from 0, past
// spinsBeforeYield) rather than finish, and must leave the stripe and the
// pair alone; once the test completes its write and releases
// the stripe, the operation must see the whole new pair.
func TestFallbackWaitsForLockedStripe(t *testing.T) {
	type result struct{ v1, v2 uint64 }
	ops := []struct {
		name string
		run  func(p *[2]uint64) result
		// want is the pair after the operation; ret what it returns.
		want, ret result
	}{
		{"Load", func(p *[2]uint64) result {
			v1, v2 := fallbackLoad(p)
			return result{v1, v2}
		}, result{5, 6}, result{5, 6}},
		{"Store", func(p *[2]uint64) result {
			fallbackStore(p, 7, 8)
			return result{}
		}, result{7, 8}, result{}},
		{"Swap", func(p *[2]uint64) result {
			o1, o2 := fallbackSwap(p, 7, 8)
			return result{o1, o2}
		}, result{7, 8}, result{5, 6}},
		{"CompareAndSwap", func(p *[2]uint64) result {
			if fallbackCas(p, 5, 6, 7, 8) {
				return result{1, 1}
			}
			return result{}
		}, result{7, 8}, result{1, 1}},
		{"CompareAndSwapFails", func(p *[2]uint64) result {
			if fallbackCas(p, 1, 2, 7, 8) {
				return result{1, 1}
			}
			return result{}
		}, result{5, 6}, result{}},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			var x Uint64Pair
			p := x.addr()
			seq := seqFor(p)
			fallbackStore(p, 1, 2)

			// The hook signals once the operation has waited past the
			// point where it yields, counting its waits from 0 (so that it
			// does yield to a descheduled writer).
			waited := make(chan struct{})
			miscounted := make(chan [2]int, 1)
			next := 0 // written by the hook only
			waitHook = func(spins int) {
				switch {
				case spins != next:
					select {
					case miscounted <- [2]int{next, spins}:
					default:
					}
				case spins == spinsBeforeYield+1:
					close(waited)
				}
				next++
			}
			defer func() { waitHook = nil }()

			odd := lockWrite(seq)
			atomic.StoreUint64(&p[0], 5) // half of the test's write of (5, 6)
			done := make(chan result, 1)
			go func() { done <- op.run(p) }()
			select {
			case <-waited:
			case m := <-miscounted:
				seq.Store(odd + 1)
				t.Fatalf("wait number %d was told it was number %d", m[0], m[1])
			case r := <-done:
				seq.Store(odd + 1)
				t.Fatalf("finished with the stripe held, returning %+v; the pair is (%d, %d)",
					r, atomic.LoadUint64(&p[0]), atomic.LoadUint64(&p[1]))
			}
			if s := seq.Load(); s != odd {
				seq.Store(odd + 1)
				t.Fatalf("a waiting %s moved the held stripe's sequence from %d to %d", op.name, odd, s)
			}
			if a, b := atomic.LoadUint64(&p[0]), atomic.LoadUint64(&p[1]); a != 5 || b != 2 {
				seq.Store(odd + 1)
				t.Fatalf("a waiting %s wrote the pair: (%d, %d), want (5, 2)", op.name, a, b)
			}
			atomic.StoreUint64(&p[1], 6)
			seq.Store(odd + 1)

			if r := <-done; r != op.ret {
				t.Fatalf("returned %+v after the stripe was released, want %+v", r, op.ret)
			}
			if v1, v2 := fallbackLoad(p); (result{v1, v2}) != op.want {
				t.Fatalf("pair (%d, %d) afterwards, want %+v", v1, v2, op.want)
			}
			if s := seq.Load(); s&1 != 0 {
				t.Fatalf("stripe left held (sequence %d)", s)
			}
		})
	}
}

// TestFallbackStoresBeforeUnlock runs each writing operation on a pair in
// read-only memory: the first data store faults, and the stripe must still
// be held then, which proves the data stores come before the release (a
// writer that released first would let readers take the old pair, or half
// of the new one, as current). The test releases the stripe itself.
func TestFallbackStoresBeforeUnlock(t *testing.T) {
	writes := []struct {
		name string
		f    func(p *[2]uint64)
	}{
		{"Store", func(p *[2]uint64) { fallbackStore(p, 3, 4) }},
		{"Swap", func(p *[2]uint64) { fallbackSwap(p, 3, 4) }},
		{"CompareAndSwap", func(p *[2]uint64) { fallbackCas(p, 1, 2, 3, 4) }},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			p := limittest.ReadOnly(t, &[2]uint64{1, 2})
			seq := seqFor(p)
			before := seq.Load()
			defer seq.Store(before + 2)
			if !limittest.Faults(func() { w.f(p) }) {
				t.Fatal("a write to read-only memory did not fault")
			}
			if s := seq.Load(); s != before+1 {
				t.Fatalf("sequence %d when the data store faulted, want %d (held): the stripe was released before the data was written", s, before+1)
			}
		})
	}

	// A compare-and-swap that fails writes no data and restores the
	// sequence it found.
	p := limittest.ReadOnly(t, &[2]uint64{1, 2})
	seq := seqFor(p)
	before := seq.Load()
	if limittest.Faults(func() { fallbackCas(p, 0, 0, 3, 4) }) {
		seq.Store(before + 2)
		t.Fatal("a failing CompareAndSwap stored to the pair")
	}
	if s := seq.Load(); s != before {
		t.Fatalf("sequence %d after a failing CompareAndSwap, want %d", s, before)
	}
}
