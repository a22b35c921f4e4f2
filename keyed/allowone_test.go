package keyed

import (
	"math/rand/v2"
	"testing"

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
