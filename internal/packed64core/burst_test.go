package packed64core

import (
	"math/rand/v2"
	"testing"
	"time"
)

// burstCases are parameters whose token time is not a whole number of
// units (and some where it is), where rounding each admission's cost up
// on its own once admitted fewer than burst at one instant.
var burstCases = []struct {
	rate  int64
	per   time.Duration
	burst int64
}{
	{10, 10 * time.Second, 10}, // a token is 976562.5 units of 1024ns
	{1, time.Minute, 3},        // a token is 3662109.375 units of 16384ns
	{1, time.Second, 1},
	{7, time.Second, 100},
	{3, time.Second, MaxBurst},
	{1000, time.Second, 1000},
	{3906250, time.Second, MaxBurst},
	{1, 256, 1},
	{3, 1000, 1},
	{1, 1<<63 - 1, MaxBurst},
	{1, 1<<63 - 1, 1},
	{333, time.Hour, 17},
}

// TestBucketBurstAtOnce: a full bucket admits exactly burst tokens at one
// instant, one at a time (AllowAt and Step) or all at once, and reads
// Remaining = burst - taken after each.
func TestBucketBurstAtOnce(t *testing.T) {
	for _, c := range burstCases {
		for _, now := range []int64{0, 12345678901, -987654321} {
			b, err := NewBucket(c.rate, c.per, c.burst)
			if err != nil {
				t.Fatal(err)
			}
			got := int64(0)
			for got <= c.burst && b.AllowAt(now) {
				got++
				if r := b.RemainingAt(now); r != c.burst-got {
					t.Fatalf("NewBucket(%d, %v, %d) at %d: Remaining %d after %d admitted, want %d", c.rate, c.per, c.burst, now, r, got, c.burst-got)
				}
			}
			if got != c.burst {
				t.Fatalf("NewBucket(%d, %v, %d) at %d: AllowAt admitted %d at one instant, want %d", c.rate, c.per, c.burst, now, got, c.burst)
			}
			b, _ = NewBucket(c.rate, c.per, c.burst)
			if r, err := b.AllowNAt(now, c.burst); err != nil || !r.OK || r.Remaining != 0 {
				t.Errorf("NewBucket(%d, %v, %d) at %d: AllowNAt(burst) = %+v, %v", c.rate, c.per, c.burst, now, r, err)
			}
			p := b.Params()
			var s BucketState
			got = 0
			for ; got <= c.burst; got++ {
				next, r, err := p.Step(s, now, 1)
				if err != nil || !r.OK {
					break
				}
				if r.Remaining != c.burst-got-1 {
					t.Errorf("NewBucket(%d, %v, %d) at %d: Step Remaining %d after %d admitted", c.rate, c.per, c.burst, now, r.Remaining, got+1)
				}
				s = next
			}
			if got != c.burst {
				t.Errorf("NewBucket(%d, %v, %d) at %d: Step admitted %d at one instant, want %d", c.rate, c.per, c.burst, now, got, c.burst)
			}
		}
	}
}

// TestBucketRemainingAgrees: after any schedule, Remaining at now is what
// an immediate request admits: Remaining tokens fit, Remaining+1 do not.
func TestBucketRemainingAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range burstCases {
		p, err := NewBucketParams(c.rate, c.per, c.burst)
		if err != nil {
			t.Fatal(err)
		}
		tok := int64(c.per) / c.rate
		var s BucketState
		now := int64(rng.Uint64N(1 << 40))
		steps := 3000
		if testing.Short() {
			steps = 300 // each step admits up to a burst one token at a time
		}
		for i := 0; i < steps; i++ {
			switch rng.IntN(4) {
			case 0:
				now += int64(rng.Uint64N(uint64(tok) + 1))
			case 1:
				now -= int64(rng.Uint64N(uint64(tok) + 1)) // stale
			case 2:
				now += int64(rng.Uint64N(uint64(tok)*uint64(c.burst)/2 + 1))
			}
			rem := p.RemainingAt(s, now)
			if _, r, _ := p.Step(s, now, 0); r.Remaining != rem {
				t.Fatalf("%v: Step(0) Remaining %d, RemainingAt %d", c, r.Remaining, rem)
			}
			if rem > 0 {
				if _, r, _ := p.Step(s, now, rem); !r.OK {
					t.Fatalf("%v step %d: Remaining %d but Step(%d) denied", c, i, rem, rem)
				}
			}
			if rem < c.burst {
				if _, r, _ := p.Step(s, now, rem+1); r.OK {
					t.Fatalf("%v step %d: Remaining %d but Step(%d) admitted", c, i, rem, rem+1)
				}
			}
			// One at a time too: Remaining single tokens fit, and no more.
			one := s
			for k := int64(0); k < rem; k++ {
				next, r, _ := p.Step(one, now, 1)
				if !r.OK {
					t.Fatalf("%v step %d: Remaining %d but only %d single tokens admitted", c, i, rem, k)
				}
				one = next
			}
			if _, r, _ := p.Step(one, now, 1); r.OK {
				t.Fatalf("%v step %d: Remaining %d but %d single tokens admitted", c, i, rem, rem+1)
			}
			n := 1 + rng.Int64N(max(1, min(c.burst, 3)))
			if next, r, _ := p.Step(s, now, n); r.OK {
				s = next
				if r.Remaining != p.RemainingAt(s, now) {
					t.Fatalf("%v: admitted Remaining %d, RemainingAt after %d", c, r.Remaining, p.RemainingAt(s, now))
				}
			}
		}
	}
}
