package keyed

import (
	"fmt"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/nanotime"
	"github.com/cellrate/cellrate/packed64"
)

func benchKeys(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%016x", r.Uint64())
	}
	return keys
}

// BenchmarkAllowAt: one decision on a key drawn from 1,000 (all in the
// table), injected time.
func BenchmarkAllowAt(b *testing.B) {
	for _, n := range []int{1, 16, 1000, 100000} {
		b.Run(fmt.Sprint("keys=", n), func(b *testing.B) {
			keys := benchKeys(n)
			t, err := New(100, time.Second, 100, WithCapacity(max(n*5/4, 64)))
			if err != nil {
				b.Fatal(err)
			}
			for _, k := range keys {
				t.AllowAt(k, 0)
			}
			b.ReportAllocs()
			b.ResetTimer()
			x := uint64(88172645463325252)
			for i := range b.N {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				t.AllowAt(keys[(x>>32)*uint64(n)>>32], int64(i)*100)
			}
			b.StopTimer()
			s := t.Stats()
			b.ReportMetric(float64(s.Evictions+t.reuses.Load())/float64(b.N), "claims/op")
		})
	}
}

// BenchmarkFloor: the same draw, hashing the key and one gcra limiter's
// AllowAt: what a keyed decision cannot go below.
func BenchmarkFloor(b *testing.B) {
	keys := benchKeys(1000)
	l, _ := gcra.New(100, time.Second, 100)
	seed := maphash.MakeSeed()
	x := uint64(88172645463325252)
	var sink uint64
	for i := range b.N {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		sink += maphash.String(seed, keys[(x>>32)*1000>>32])
		l.AllowAt(int64(i) * 100)
	}
	_ = sink
}

// BenchmarkFloorPaired: a keyed decision (Allow, the real clock) against
// its floor, a packed64.Buckets slot indexed by the same maphash of the
// same key (the same clock, one 64-bit CAS), on the same draw of keys. The
// two alternate in rounds of 256 decisions inside each b.N, so both see
// the same machine; it reports each one's ns a decision and their ratio.
func BenchmarkFloorPaired(b *testing.B) {
	for _, n := range []int{1000, 1000000} {
		keys := benchKeys(n)
		slots := n * 5 / 4
		tb, err := New(100, time.Second, 100, WithCapacity(slots))
		if err != nil {
			b.Fatal(err)
		}
		pb, err := packed64.NewBuckets(slots, 100, time.Second, 100)
		if err != nil {
			b.Fatal(err)
		}
		seed := maphash.MakeSeed()
		for _, k := range keys {
			tb.Allow(k)
		}
		b.Run(fmt.Sprint("keys=", n), func(b *testing.B) {
			const round = 256
			var ours, floor int64
			// Two draws, so that neither finds the keys the other just
			// read in the cache.
			x, y := uint64(88172645463325252), uint64(0x9E3779B97F4A7C15)
			for done := 0; done < b.N; done += round {
				t0 := nanotime.Now()
				for range round {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
					tb.Allow(keys[(x>>32)*uint64(n)>>32])
				}
				t1 := nanotime.Now()
				for range round {
					y ^= y << 13
					y ^= y >> 7
					y ^= y << 17
					i, _ := bits.Mul64(maphash.String(seed, keys[(y>>32)*uint64(n)>>32]), uint64(slots))
					pb.Allow(int(i))
				}
				t2 := nanotime.Now()
				ours, floor = ours+t1-t0, floor+t2-t1
			}
			rounds := float64((b.N + round - 1) / round * round)
			b.ReportMetric(float64(ours)/rounds, "keyed-ns/op")
			b.ReportMetric(float64(floor)/rounds, "floor-ns/op")
			b.ReportMetric(float64(ours)/float64(floor), "keyed/floor")
		})
	}
}

// BenchmarkInstr runs b.N decisions of one side of BenchmarkFloorPaired
// alone (keyed, or its floor), each in a function of its own, so that an
// instruction counter can count one side's loop and nothing else:
//
//	go test -c -o /tmp/keyed.test ./keyed
//	valgrind --tool=callgrind --toggle-collect='*keyed.instrKeyed' \
//	  /tmp/keyed.test -test.run XXX -test.bench 'Instr/keyed/keys=1000$' -test.benchtime 1000000x
//
// counts the keyed loop's instructions (b.N+1 decisions: the harness runs
// b.N = 1 first); instrFloor's, with 'Instr/floor/...', the floor's.
func BenchmarkInstr(b *testing.B) {
	for _, n := range []int{1000, 1000000} {
		keys := benchKeys(n)
		slots := n * 5 / 4
		tb, err := New(100, time.Second, 100, WithCapacity(slots))
		if err != nil {
			b.Fatal(err)
		}
		pb, err := packed64.NewBuckets(slots, 100, time.Second, 100)
		if err != nil {
			b.Fatal(err)
		}
		seed := maphash.MakeSeed()
		b.Run(fmt.Sprint("keyed/keys=", n), func(b *testing.B) {
			for _, k := range keys {
				tb.Allow(k)
			}
			runtime.GC() // not in the count: the fill's garbage
			b.ResetTimer()
			instrKeyed(tb, keys, b.N)
		})
		b.Run(fmt.Sprint("floor/keys=", n), func(b *testing.B) {
			runtime.GC()
			instrFloor(pb, seed, keys, slots, b.N)
		})
	}
}

//go:noinline
func instrKeyed(tb *Table, keys []string, count int) {
	n := uint64(len(keys))
	x := uint64(88172645463325252)
	for range count {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		tb.Allow(keys[(x>>32)*n>>32])
	}
}

//go:noinline
func instrFloor(pb *packed64.Buckets, seed maphash.Seed, keys []string, slots, count int) {
	n := uint64(len(keys))
	y := uint64(0x9E3779B97F4A7C15)
	for range count {
		y ^= y << 13
		y ^= y >> 7
		y ^= y << 17
		i, _ := bits.Mul64(maphash.String(seed, keys[(y>>32)*n>>32]), uint64(slots))
		pb.Allow(int(i))
	}
}
