package keyed

import (
	"math/rand/v2"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/limit"
)

// keyMember is a limit.Member for one key of a table.
type keyMember struct {
	t   *Table
	key string
}

func (m keyMember) AllowAt(now int64) bool { r, _ := m.AllowNAt(now, 1); return r.OK }
func (m keyMember) AllowNAt(now, n int64) (limit.Result, error) {
	r, _, err := m.TakeAt(now, n)
	return r, err
}
func (m keyMember) TakeAt(now, n int64) (limit.Result, limit.Receipt, error) {
	return m.t.TakeAt(m.key, now, n)
}
func (m keyMember) Refund(rc limit.Receipt) { m.t.Refund(rc) }

// TestTakeRefund: a taken and refunded admission leaves the key's limiter
// deciding as a twin table's that never saw it, for a key placed by the
// admission and for one already held; Take decides as AllowN does.
func TestTakeRefund(t *testing.T) {
	kinds(t, func(t *testing.T, mk func(opts ...Option) *Table) {
		rng := rand.New(rand.NewPCG(4, 5))
		for run := range 50 {
			a, b := mk(), mk()
			now := int64(1e9 + rng.Int64N(1e9))
			// Some history for the key on both, or none (a new key).
			for range rng.IntN(4) {
				now += rng.Int64N(int64(tPeriod) / 4)
				n := 1 + rng.Int64N(2)
				ra, _ := a.AllowNAt("k", now, n)
				rb, _, _ := b.TakeAt("k", now, n)
				if ra != rb {
					t.Fatalf("run %d: AllowNAt %+v, TakeAt %+v", run, ra, rb)
				}
			}
			now += rng.Int64N(int64(tPeriod) / 4)
			r, rc, err := a.TakeAt("k", now, 1+rng.Int64N(2))
			if err != nil {
				t.Fatal(err)
			}
			if r.OK != (rc.N != 0) {
				t.Fatalf("run %d: %+v with receipt %+v", run, r, rc)
			}
			a.Refund(rc)
			for i := range 20 {
				now += rng.Int64N(int64(tPeriod)/8) - int64(tPeriod)/64
				n := 1 + rng.Int64N(3)
				ra, _ := a.AllowNAt("k", now, n)
				rb, _ := b.AllowNAt("k", now, n)
				if ra != rb {
					t.Fatalf("run %d op %d: refunded table %+v, twin %+v", run, i, ra, rb)
				}
			}
		}
	})
}

// TestRefundAfterAdmission: a refund after a later admission of the key
// gives nothing back; zero and foreign receipts change nothing.
func TestRefundAfterAdmission(t *testing.T) {
	tb := newBucketTable(t)
	now := int64(1e9)
	_, rc, _ := tb.TakeAt("k", now, 2)
	tb.AllowNAt("k", now, 1)
	before := tb.RemainingAt("k", now)
	tb.Refund(rc)
	tb.Refund(limit.Receipt{})
	tb.Refund(limit.Receipt{N: 1, Before: [2]uint64{0, 1 << 40}})
	if got := tb.RemainingAt("k", now); got != before || got != tBurst-3 {
		t.Fatalf("Remaining %d after a stale refund, want %d", got, tBurst-3)
	}
	if _, rc, _ := tb.TakeAt("k", now, 0); rc.N != 0 {
		t.Fatalf("n = 0 gave a receipt %+v", rc)
	}
	if r, rc, err := tb.TakeAt("k", now, tBurst+1); r.OK || err == nil || rc.N != 0 {
		t.Fatalf("n > burst: %+v %+v %v", r, rc, err)
	}
	addr := netip.MustParseAddr("2001:db8::1")
	_, rc, _ = tb.TakeAddrAt(addr, now, tBurst-1)
	if r, _, _ := tb.TakeAddrAt(addr, now, 1); !r.OK || tb.RemainingAt("x", now) != tBurst {
		t.Fatal("the last token, or an unrelated key")
	}
	tb.Refund(rc)
	if r, _, _ := tb.TakeAddrAt(netip.MustParseAddr("2001:db8::2"), now, 1); r.OK {
		t.Fatal("a refund gave back units after a later admission (same /64)")
	}
}

// TestTakeAllBound: goroutines ask an All of a key's limiter and a shared
// global GCRA that often denies, so keys are often refunded; each key's
// bound holds over the admissions the composition made, and so does the
// global one.
func TestTakeAllBound(t *testing.T) {
	const K, G = 3, 6
	tb := newBucketTable(t)
	global, _ := gcra.New(30, tPeriod, 4)
	iters := 3000
	if testing.Short() {
		iters = 1000
	}
	var mu sync.Mutex
	keyUses := make([][]bound.Use, K)
	var globalUses []bound.Use
	var wg sync.WaitGroup
	base := time.Now()
	for g := range G {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			k := g % K
			all, _ := limit.NewAll(keyMember{tb, string(rune('a' + k))}, global)
			for range iters {
				now := int64(time.Since(base))
				n := 1 + rng.Int64N(2)
				if r, _ := all.AllowNAt(now, n); r.OK {
					mu.Lock()
					keyUses[k] = append(keyUses[k], bound.Use{At: now, Cost: n})
					globalUses = append(globalUses, bound.Use{At: now, Cost: n})
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(globalUses) == 0 {
		t.Fatal("nothing admitted")
	}
	for k := range K {
		if err := bound.Check(keyUses[k], tBurst, tEvents, uint64(tPeriod)); err != nil {
			t.Fatalf("key %d: %v", k, err)
		}
	}
	if err := bound.Check(globalUses, 4, 30, uint64(tPeriod)); err != nil {
		t.Fatalf("global: %v", err)
	}
}
