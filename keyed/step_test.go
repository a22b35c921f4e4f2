package keyed

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/gcrastep"
)

// TestAllowStepsAsGCRA: Allow's one-unit decisions, on a held key's fast
// path and on a new key's first decision, are each key's own GCRA's, for
// token times of whole ns (the inlined step) and of fractions of a ns.
func TestAllowStepsAsGCRA(t *testing.T) {
	for _, c := range []struct {
		events int64
		period time.Duration
		burst  int64
		oneNs  bool
	}{
		{10, time.Millisecond, 5, true},
		{3, time.Second, 4, false},
		{7, 10 * time.Nanosecond, 3, false},
		{1, time.Nanosecond, 1, true},
	} {
		t.Run(fmt.Sprint(c.events, "/", c.period), func(t *testing.T) {
			p, err := gcrastep.NewParams(c.events, c.period, c.burst)
			if err != nil {
				t.Fatal(err)
			}
			if p.OneNs() != c.oneNs {
				t.Fatalf("OneNs %v, want %v: the case no longer runs the path it is for", p.OneNs(), c.oneNs)
			}
			const base = int64(1 << 40)
			now := base
			tb, err := New(c.events, c.period, c.burst, WithCapacity(64), WithClock(func() int64 { return now }))
			if err != nil {
				t.Fatal(err)
			}
			own := map[string]gcrastep.State{}
			r := rand.New(rand.NewPCG(uint64(c.events), 7))
			admitted := 0
			for i := range 4000 {
				// Eight keys at about their rate together, so that both
				// outcomes come often.
				now = max(now, base+int64(i)*int64(c.period)/(8*c.events)+r.Int64N(3)-1)
				key := fmt.Sprint("k", r.IntN(8))
				next, want, _ := p.Step(own[key], now, 1)
				if want.OK {
					own[key] = next
					admitted++
				}
				if got := tb.Allow(key); got != want.OK {
					t.Fatalf("op %d: %q at %d: Allow %v, its own GCRA %v", i, key, now, got, want.OK)
				}
			}
			if admitted < 200 || admitted > 3800 {
				t.Fatalf("%d of 4000 admitted: the schedule tests too little of both outcomes", admitted)
			}
		})
	}
}

// TestPaidBy: a key owing o is idle at now (o <= paidBy(now)) exactly when
// its limiter has nothing to pay: a GCRA with its whole burst remaining, a
// window counting nothing, short of the end of time; checked at the
// threshold's edges and at random, for token times of whole ns and of
// fractions of a ns, and for windows.
func TestPaidBy(t *testing.T) {
	var ks []*kind
	for _, c := range [][3]int64{{10, int64(time.Millisecond), 5}, {3, int64(time.Second), 4}, {7, 10, 3}, {1, 1, 1}, {1, int64(time.Hour), 1 << 20}} {
		k, err := newBucketKind(c[0], time.Duration(c[1]), c[2])
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
	}
	w, err := newWindowKind(tLimit, tWindow)
	if err != nil {
		t.Fatal(err)
	}
	ks = append(ks, w)
	paid := func(k *kind, o uint64, now int64) bool {
		if !k.window {
			_, r, _ := k.g.Step(gcrastep.State(o), now, 0)
			return r.Remaining == k.g.Burst()
		}
		return o == 0 || int64(o^signBit) <= now && int64(o^signBit) != math.MaxInt64
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range ks {
		for i := range 3000 {
			now := int64(r.Uint64())
			switch i % 5 {
			case 0:
				now = math.MaxInt64 - r.Int64N(3)
			case 1:
				now = math.MinInt64 + r.Int64N(3)
			}
			th := k.paidBy(now)
			for _, o := range []uint64{0, 1, math.MaxUint64, math.MaxUint64 - 1, th - 1, th, th + 1, r.Uint64(), uint64(now) ^ signBit} {
				if got, want := o <= th, paid(k, o, now); got != want {
					t.Fatalf("window %v, owing %#x at %d: idle %v, its limiter says %v", k.window, o, now, got, want)
				}
			}
		}
	}
}
