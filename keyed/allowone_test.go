package keyed

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/internal/race"
)

// TestBoundAllowOne: TestBound's schedules decided through the one-unit
// paths (AllowAt: the held key's fast path and a new key's one-unit step)
// mixed with AllowNAt, in tables far over capacity: each key stays within
// its own limiter's exact bound.
func TestBoundAllowOne(t *testing.T) {
	runs := 6
	switch {
	case race.Enabled:
		runs = 1
	case testing.Short():
		runs = 2
	}
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		for _, shape := range []string{"random", "bursty", "stale", "returning", "shuffled", "whole-burst", "keeper", "ties"} {
			for _, refuse := range []bool{false, true} {
				for seed := range uint64(runs) {
					r := rand.New(rand.NewPCG(seed, 7))
					opts := []Option{WithCapacity(4 * (1 + r.IntN(3)))}
					if refuse {
						opts = append(opts, WithRefuse())
					}
					tb := mk(opts...)
					keys := keyNames(2 + r.IntN(60))
					if shape == "returning" {
						keys = keys[:min(len(keys), 2+r.IntN(12))]
					}
					admitted := map[string][]bound.Use{}
					for _, u := range schedule(r, keys, 1500, shape, tb.burst()) {
						if r.IntN(4) != 0 {
							// Every unit through AllowAt, one decision each.
							for range u.n {
								if tb.AllowAt(u.key, u.at) {
									admitted[u.key] = append(admitted[u.key], bound.Use{At: u.at, Cost: 1})
								}
							}
							continue
						}
						if res, err := tb.AllowNAt(u.key, u.at, u.n); res.OK && err == nil {
							admitted[u.key] = append(admitted[u.key], bound.Use{At: u.at, Cost: u.n})
						}
					}
					checkBound(t, tb, admitted)
				}
			}
		}
	})
}

// TestConcurrentBoundAllowOne: TestConcurrentBound's goroutines with the
// hot keys decided through AllowAt (the fast path's one load, step and
// compare-and-swap racing floods that take their slots): each key within
// its own exact bound.
func TestConcurrentBoundAllowOne(t *testing.T) {
	ops := 20000
	switch {
	case race.Enabled:
		ops = 1500
	case testing.Short():
		ops = 3000
	}
	kinds(t, func(t *testing.T, mk func(...Option) *Table) {
		tb := mk(WithCapacity(8))
		keys := keyNames(800)
		var (
			mu       sync.Mutex
			admitted = map[string][]bound.Use{}
			wg       sync.WaitGroup
		)
		var base int64 = 1 << 40
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(g), 9))
				mine := map[string][]bound.Use{}
				for i := range ops {
					now := base + int64(i)*int64(10*time.Microsecond) - int64(r.Uint64N(uint64(time.Millisecond)))
					switch r.IntN(4) {
					case 0, 1:
						key := keys[r.IntN(8)] // a few hot keys
						if tb.AllowAt(key, now) {
							mine[key] = append(mine[key], bound.Use{At: now, Cost: 1})
						}
						continue
					}
					key, n := keys[r.IntN(len(keys))], int64(1+r.IntN(2))
					if r.IntN(2) == 0 {
						key, n = fmt.Sprint("flood", g, "-", i), tb.burst()
					}
					if res, err := tb.AllowNAt(key, now, n); res.OK && err == nil {
						mine[key] = append(mine[key], bound.Use{At: now, Cost: n})
					}
				}
				mu.Lock()
				for k, u := range mine {
					admitted[k] = append(admitted[k], u...)
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		checkBound(t, tb, admitted)
	})
}
