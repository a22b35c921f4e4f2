package keyed

import (
	"testing"
	"time"
)

// TestBucketBurstAtOnce: a key's full bucket admits exactly burst at one
// instant, and Remaining after each admission is what is still admitted,
// also where a token is not a whole number of packed64's time units.
func TestBucketBurstAtOnce(t *testing.T) {
	for _, c := range []struct {
		events int64
		period time.Duration
		burst  int64
	}{{10, 10 * time.Second, 10}, {1, time.Minute, 3}, {7, time.Second, 100}, {1, time.Second, 1}} {
		tb, err := New(c.events, c.period, c.burst)
		if err != nil {
			t.Fatal(err)
		}
		now := int64(5 * time.Second)
		got := int64(0)
		for got <= c.burst && tb.AllowAt("k", now) {
			got++
			if r := tb.RemainingAt("k", now); r != c.burst-got {
				t.Errorf("New(%d, %v, %d): Remaining %d after %d admitted, want %d", c.events, c.period, c.burst, r, got, c.burst-got)
			}
		}
		if got != c.burst {
			t.Errorf("New(%d, %v, %d): admitted %d at one instant, want %d", c.events, c.period, c.burst, got, c.burst)
		}
	}
}
