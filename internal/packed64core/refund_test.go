package packed64core

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/limit"
)

// member is a Bucket or a Window with its word, for the refund tests.
type member struct {
	name string
	m    limit.Member
	word *atomic.Uint64
	left func(now int64) int64
}

func members(t *testing.T) []member {
	b, err := NewBucket(1, time.Second, 3)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWindow(3, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return []member{{"Bucket", b, &b.c.word, b.RemainingAt}, {"Window", w, &w.c.word, w.RemainingAt}}
}

// TestRefund: a Refund right after the admission restores the word
// exactly; after another admission it gives nothing back; denials and
// n = 0 have the zero Receipt, which refunds nothing.
func TestRefund(t *testing.T) {
	for _, m := range members(t) {
		const now = int64(5e9)
		before, left := m.word.Load(), m.left(now)
		r, rc, err := m.m.TakeAt(now, 2)
		if !r.OK || err != nil || rc.N != 2 || rc.At != now || rc.Before[0] != before || rc.After[0] != m.word.Load() {
			t.Fatalf("%s: TakeAt = %+v %+v %v", m.name, r, rc, err)
		}
		m.m.Refund(rc)
		if m.word.Load() != before || m.left(now) != left {
			t.Fatalf("%s: word %#x, %d left after the refund; want %#x, %d", m.name, m.word.Load(), m.left(now), before, left)
		}
		_, rc, _ = m.m.TakeAt(now, 2)
		m.m.AllowAt(now)
		after := m.word.Load()
		m.m.Refund(rc)
		if m.word.Load() != after {
			t.Fatalf("%s: a refund after another admission gave units back", m.name)
		}
		if r, rc, _ := m.m.TakeAt(now, 1); r.OK || rc != (limit.Receipt{}) {
			t.Fatalf("%s: denial: %+v %+v", m.name, r, rc)
		}
		if _, rc, _ := m.m.TakeAt(now, 0); rc != (limit.Receipt{}) {
			t.Fatalf("%s: n = 0: %+v", m.name, rc)
		}
		if _, rc, err := m.m.TakeAt(now, -1); rc != (limit.Receipt{}) || err != limit.ErrNegativeCost {
			t.Fatalf("%s: n = -1: %+v %v", m.name, rc, err)
		}
		m.m.Refund(limit.Receipt{})
		if m.word.Load() != after {
			t.Fatalf("%s: the zero Receipt refunded", m.name)
		}
	}
}

// TestRefundAfterLaterAdmission: burst 2 at 1/s; A is taken at 0 and
// refunded only after B at 0.9 s, so the refund must give nothing back:
// otherwise three tokens fall within 0.1 s.
func TestRefundAfterLaterAdmission(t *testing.T) {
	b, _ := NewBucket(1, time.Second, 2)
	_, rc, _ := b.TakeAt(0, 1) // A
	var uses []bound.Use
	for i, now := range []int64{9e8, 9e8, 1e9} {
		if b.AllowAt(now) {
			uses = append(uses, bound.Use{At: now, Cost: 1})
		}
		if i == 0 {
			b.Refund(rc)
		}
	}
	p := b.Params()
	if err := bound.CheckSlack(uses, p.burst, 1<<p.clk.shift, p.rate, p.per); err != nil {
		t.Fatal(err)
	}
}

// TestRefundAfterSameBits: an admission a whole number of wraps after A
// can leave A's very word; A's refund then would undo that admission, so
// it must give nothing back.
func TestRefundAfterSameBits(t *testing.T) {
	bp, _ := NewBucketParams(48, time.Second, 2)
	wp, _ := NewWindowParams(2, time.Second)
	b, w := &Bucket{c: bucketCell{p: bp}}, &Window{c: windowCell{p: wp}}
	for _, c := range []struct {
		name string
		m    limit.Member
		wrap int64
	}{{"Bucket", b, int64(bp.Wrap())}, {"Window", w, int64(wp.Wrap())}} {
		t1 := int64(1e12)
		t2 := t1 + 1000*c.wrap
		_, rc, _ := c.m.TakeAt(t1, 1) // A
		if _, rc2, _ := c.m.TakeAt(t2, 1); rc2.After[0] != rc.After[0] {
			t.Fatalf("%s: the second admission left %#x, the first %#x", c.name, rc2.After[0], rc.After[0])
		}
		c.m.Refund(rc)
		if r, _ := c.m.AllowNAt(t2+3e6, 2); r.OK {
			t.Errorf("%s: A's refund gave back the unit taken at t2", c.name)
		}
	}
}

// TestConcurrentRefund: goroutines take and refund on one limiter while
// others admit; each limiter's bound holds over the admissions not
// refunded.
func TestConcurrentRefund(t *testing.T) {
	b, _ := NewBucket(3, time.Millisecond, 4)
	w, _ := NewWindow(4, time.Millisecond)
	for _, m := range []limit.Member{b, w} {
		var clock atomic.Int64
		clock.Store(1e12)
		const G = 6
		iters := 3000
		if testing.Short() {
			iters = 600
		}
		per := make([][]admission, G)
		var wg sync.WaitGroup
		for g := range G {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), 13))
				for range iters {
					now := clock.Add(rng.Int64N(100_000))
					n := 1 + rng.Int64N(2)
					r, rc, _ := m.TakeAt(now, n)
					if !r.OK {
						continue
					}
					if g%2 == 0 && rng.IntN(2) == 0 {
						m.Refund(rc)
						continue
					}
					per[g] = append(per[g], admission{now, n})
				}
			})
		}
		wg.Wait()
		var all []admission
		for _, p := range per {
			all = append(all, p...)
		}
		if m == limit.Member(b) {
			checkBucketBound(t, all, &b.c.p)
			continue
		}
		p := w.Params()
		uses := make([]bound.Use, len(all))
		for i, a := range all {
			uses[i] = bound.Use{At: p.clk.units(a.t), Cost: a.n}
		}
		if err := bound.Check(uses, 2*uint64(p.r.L), p.r.L, p.r.W); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInAll: a Bucket and a Window in a limit.All; when the window denies,
// the bucket gets its tokens back.
func TestInAll(t *testing.T) {
	b, _ := NewBucket(10, time.Second, 5)
	w, _ := NewWindow(2, time.Second)
	all, err := limit.NewAll(b, w)
	if err != nil {
		t.Fatal(err)
	}
	const now = int64(1e12)
	for i, want := range []bool{true, true, false, false} {
		if got := all.AllowAt(now); got != want {
			t.Fatalf("request %d: %v", i, got)
		}
	}
	if left := b.RemainingAt(now); left != 3 {
		t.Fatalf("the bucket holds %d tokens, want 3: the denied requests were not refunded", left)
	}
}

// FuzzUndo: a step followed by Undo of its words restores the state, and
// Undo refuses any other word.
func FuzzUndo(f *testing.F) {
	f.Add(int64(3), int64(1e9), int64(4), uint64(0), int64(1e12), int64(2), uint64(7))
	f.Fuzz(func(t *testing.T, events, period, burst int64, w uint64, now, n int64, other uint64) {
		if p, err := NewBucketParams(events, time.Duration(period), burst); err == nil {
			s := BucketState{BucketWord(w), now}
			next, r, err := p.Step(s, now, n)
			if err == nil && r.OK && n > 0 {
				if u, ok := p.Undo(next, now, s.Word, next.Word); !ok || u.Word != s.Word {
					t.Fatalf("bucket: Undo of %+v -> %+v gave %+v %v", s, next, u, ok)
				}
				if BucketWord(other) != next.Word {
					if u, ok := p.Undo(BucketState{BucketWord(other), next.Ref}, now, s.Word, next.Word); ok || u.Word != BucketWord(other) {
						t.Fatalf("bucket: Undo over another word gave %+v %v", u, ok)
					}
				}
			}
		}
		if p, err := NewWindowParams(burst, time.Duration(period)); err == nil {
			s := WindowState{WindowWord(w), now}
			next, r, err := p.Step(s, now, n)
			if err == nil && r.OK && n > 0 {
				if u, ok := p.Undo(next, now, s.Word, next.Word); !ok || u.Word != s.Word {
					t.Fatalf("window: Undo of %+v -> %+v gave %+v %v", s, next, u, ok)
				}
			}
		}
	})
}
