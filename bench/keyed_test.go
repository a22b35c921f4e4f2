package bench

import (
	"fmt"
	"hash/maphash"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/keyed"
)

// keyCounts are the two regimes of the keyed benchmarks: keys that fit in
// the caches, and a million, where every draw misses them.
var keyCounts = []int{1000, 1000000}

// BenchmarkKeyed: one decision for a key drawn from 1,000 or 1,000,000,
// each limiter reading the real clock as it does by default, every key
// decided on once beforehand. One limiter serves every goroutine count.
func BenchmarkKeyed(b *testing.B) {
	for _, n := range keyCounts {
		keys := keysOf(n)
		for _, im := range KeyedImpls() {
			var l KeyedLimiter
			for _, g := range goroutines() {
				b.Run(fmt.Sprintf("keys=%d/%s/g=%d", n, im.Name, g), func(b *testing.B) {
					if l == nil {
						l = im.New(n)
						for _, k := range keys {
							l.Allow(k)
						}
						b.ResetTimer()
					}
					b.ReportMetric(100*run(b, g, drawOp(keys, func(k string, _ int64) bool { return l.Allow(k) })), "admit%")
				})
			}
			l = nil
			runtime.GC()
		}
	}
}

// BenchmarkKeyedAt: keyed's AllowAt on injected time against its floor,
// one gcra limiter's AllowAt plus hashing the key (the draw is in both).
func BenchmarkKeyedAt(b *testing.B) {
	for _, n := range keyCounts {
		keys := keysOf(n)
		t, err := keyed.New(KeyedEvents, KeyedPeriod, KeyedEvents, keyed.WithCapacity(KeyedCapacity(n)))
		if err != nil {
			b.Fatal(err)
		}
		for _, k := range keys {
			t.AllowAt(k, 0)
		}
		for _, g := range goroutines() {
			b.Run(fmt.Sprintf("keys=%d/keyed/g=%d", n, g), func(b *testing.B) {
				b.ReportMetric(100*run(b, g, drawOp(keys, t.AllowAt)), "admit%")
			})
			b.Run(fmt.Sprintf("keys=%d/gcra+maphash/g=%d", n, g), func(b *testing.B) {
				l, err := gcra.New(KeyedEvents, KeyedPeriod, KeyedEvents)
				if err != nil {
					b.Fatal(err)
				}
				seed := maphash.MakeSeed()
				var sink atomic.Uint64
				var local uint64
				b.ReportMetric(100*run(b, g, drawOp(keys, func(k string, now int64) bool {
					local += maphash.String(seed, k)
					return l.AllowAt(now)
				})), "admit%")
				sink.Store(local)
			})
		}
	}
}

// TestKeyedBytesPerKey logs the live heap each keyed limiter holds after
// one decision on each of a million keys, per key (the keys' own strings,
// allocated before, excluded). Each limiter is measured in a process of
// its own (this test binary, run again), so no other limiter's memory is
// freed or kept meanwhile. It takes minutes: not with -short.
func TestKeyedBytesPerKey(t *testing.T) {
	if testing.Short() {
		t.Skip("a million keys per limiter")
	}
	if name := os.Getenv("CELLRATE_KEYED_MEMORY"); name != "" {
		for _, im := range KeyedImpls() {
			if im.Name == name {
				fmt.Printf("B/key %.1f\n", bytesPerKey(im, 1000000))
			}
		}
		return
	}
	for _, im := range KeyedImpls() {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestKeyedBytesPerKey$")
		cmd.Env = append(os.Environ(), "CELLRATE_KEYED_MEMORY="+im.Name)
		out, err := cmd.CombinedOutput()
		var bpk float64
		if _, scanErr := fmt.Sscanf(string(out), "B/key %g", &bpk); err != nil || scanErr != nil {
			t.Fatalf("%s: %v %v\n%s", im.Name, err, scanErr, out)
		}
		t.Logf("%-16s %6.1f B/key", im.Name, bpk)
		if strings.HasPrefix(im.Name, "keyed") && bpk > 24 {
			t.Errorf("%s holds %.1f bytes a key, more than 24", im.Name, bpk)
		}
	}
}

// bytesPerKey is the live heap a new limiter holds after a decision on
// each of n keys, per key.
func bytesPerKey(im KeyedImpl, n int) float64 {
	keys := keysOf(n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := im.New(n)
	for _, k := range keys {
		l.Allow(k)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(l)
	runtime.KeepAlive(keys)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}
