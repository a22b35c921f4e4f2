package keyed

import (
	"testing"
	"time"

	"github.com/cellrate/cellrate/gcra"
)

// TestBucketBurstAtOnce: a key's full bucket admits at one instant what a
// gcra limiter of the same parameters does (the whole burst, or burst-1
// off gcra's step grid), and Remaining after each admission is what is
// still admitted.
func TestBucketBurstAtOnce(t *testing.T) {
	for _, c := range []struct {
		events int64
		period time.Duration
		burst  int64
	}{{10, 10 * time.Second, 10}, {1, time.Minute, 3}, {7, time.Second, 100}, {1, time.Second, 1}, {3, time.Second, 40000}} {
		tb, err := New(c.events, c.period, c.burst)
		if err != nil {
			t.Fatal(err)
		}
		l, _ := gcra.New(c.events, c.period, c.burst)
		now := int64(5 * time.Second)
		want := int64(0)
		for want <= c.burst && l.AllowAt(now) {
			want++
		}
		got := int64(0)
		for got <= c.burst && tb.AllowAt("k", now) {
			got++
			if r := tb.RemainingAt("k", now); r != want-got {
				t.Fatalf("New(%d, %v, %d): Remaining %d after %d admitted, want %d", c.events, c.period, c.burst, r, got, want-got)
			}
		}
		if got != want || want < c.burst-1 {
			t.Errorf("New(%d, %v, %d): admitted %d at one instant, gcra %d", c.events, c.period, c.burst, got, want)
		}
	}
}
