package packed64core

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/limit"
)

// satAdd returns a + b, saturated to int64.
func satAdd(a, b int64) int64 {
	s := a + b
	if (s > a) != (b > 0) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

func TestHighWaterEnds(t *testing.T) {
	const slack = 1 << 30
	var h HighWater
	h.Raise(math.MaxInt64, slack)
	h.Raise(1e12, slack) // must not lower the mark
	if got := h.Ref(0); got != math.MaxInt64 {
		t.Fatalf("mark %d after Raise(MaxInt64) and Raise(1e12), want MaxInt64", got)
	}
	if got := h.Ref(slack); got != math.MaxInt64 {
		t.Fatalf("Ref(slack) = %d at the top of time, want MaxInt64", got)
	}
	for _, m := range []int64{math.MaxInt64 - slack - 1, math.MaxInt64 - slack, math.MaxInt64 - slack + 1, math.MaxInt64 - 1} {
		var h HighWater
		h.Raise(m, slack)
		if got := h.Ref(slack); got < m {
			t.Errorf("mark %d: Ref(slack) = %d, before the mark", m, got)
		}
		h.Raise(m-1, slack)
		if got := h.Ref(0); got != m {
			t.Errorf("mark %d: Raise(mark-1) left %d", m, got)
		}
	}
	// The zero value is the start of time: a word written at any time is
	// read against a reference at or after it once the mark is raised.
	var z HighWater
	if got := z.Ref(0); got != math.MinInt64 {
		t.Fatalf("zero HighWater: Ref(0) = %d, want MinInt64", got)
	}
	if got := z.Ref(slack); got != math.MinInt64+slack {
		t.Fatalf("zero HighWater: Ref(slack) = %d", got)
	}
	z.Raise(math.MinInt64+slack, slack) // within the slack: no write
	if got := z.Ref(0); got != math.MinInt64 {
		t.Fatalf("Raise within the slack moved the mark to %d", got)
	}
	z.Raise(math.MinInt64+slack+1, slack)
	if got := z.Ref(0); got != math.MinInt64+slack+1 {
		t.Fatalf("Raise past the slack left the mark at %d", got)
	}
}

// TestEndOfTimeSymptoms: a 1/s limiter with burst 1 admits at 1e12, then at
// MaxInt64 (a full refill later), and must then deny a stale 1e12+1: two
// admissions 1ns apart exceed the bound. In a table, the call at MaxInt64
// on another slot must not break the first slot either.
func TestEndOfTimeSymptoms(t *testing.T) {
	const early = int64(1e12)
	b, _ := NewBucket(1, time.Second, 1)
	w, _ := NewWindow(1, time.Second)
	bs, _ := NewBuckets(2, 1, time.Second, 1)
	ws, _ := NewWindows(2, 1, time.Second)
	for _, c := range []struct {
		name  string
		allow func(i int, now int64) bool
	}{
		{"Bucket", func(_ int, now int64) bool { return b.AllowAt(now) }},
		{"Window", func(_ int, now int64) bool { return w.AllowAt(now) }},
		{"Buckets", bs.AllowAt},
		{"Windows", ws.AllowAt},
	} {
		if !c.allow(0, early) {
			t.Errorf("%s: denied the first unit", c.name)
		}
		if !c.allow(1, math.MaxInt64) {
			t.Errorf("%s: denied at MaxInt64, long after its last use", c.name)
		}
		if c.allow(0, early+1) {
			t.Errorf("%s: admitted at %d, 1ns after an admission, with burst 1", c.name, early+1)
		}
	}
	// The same through AllowNAt, with a cost.
	b2, _ := NewBucket(1, time.Second, 6)
	if r, _ := b2.AllowNAt(math.MaxInt64-5, 6); !r.OK {
		t.Fatal("a full bucket denied its burst")
	}
	if r, _ := b2.AllowNAt(math.MaxInt64, 6); r.OK {
		t.Fatal("a 1/s bucket admitted its burst twice within 5ns")
	}
	if r, _ := b2.AllowNAt(math.MaxInt64, 1); r.OK || r.RetryAfter != limit.Never {
		t.Fatalf("at MaxInt64 an empty bucket returned %+v, want a denial with RetryAfter Never", r)
	}
}

// endCell is a cell that shares a HighWater, under test at an end of time:
// a single limiter (one slot) or a table (several).
type endCell struct {
	slots  int
	allow  func(i int, now int64) bool
	allowN func(i int, now, n int64) (limit.Result, error)
}

func bucketCells(p BucketParams) []endCell {
	b := &Bucket{c: bucketCell{p: p}}
	t := &Buckets{p: p, words: make([]atomic.Uint64, 3)}
	return []endCell{
		{1, func(_ int, now int64) bool { return b.AllowAt(now) }, func(_ int, now, n int64) (limit.Result, error) { return b.AllowNAt(now, n) }},
		{3, t.AllowAt, t.AllowNAt},
	}
}

func windowCells(p WindowParams) []endCell {
	c := &Window{c: windowCell{p: p}}
	t := &Windows{p: p, words: make([]atomic.Uint64, 3)}
	return []endCell{
		{1, func(_ int, now int64) bool { return c.AllowAt(now) }, func(_ int, now, n int64) (limit.Result, error) { return c.AllowNAt(now, n) }},
		{3, t.AllowAt, t.AllowNAt},
	}
}

// endClock makes the times of a schedule at one end of int64 time: a
// clock that moves forward (saturating at MaxInt64), sometimes by years,
// and callers who pass it stale (saturating at MinInt64) or pass an earlier
// caller's time again.
type endClock struct {
	rng    *rand.Rand
	span   int64
	jumps  bool
	clock  int64
	passed []int64
}

func newEndClock(rng *rand.Rand, span int64, top, jumps bool) *endClock {
	c := &endClock{rng: rng, span: span, jumps: jumps}
	if top {
		c.clock = math.MaxInt64 - rng.Int64N(64*span)
	} else {
		c.clock = math.MinInt64 + rng.Int64N(span)
	}
	return c
}

func (c *endClock) next() int64 {
	if c.jumps && c.rng.IntN(10) == 0 {
		c.clock = satAdd(c.clock, (1+c.rng.Int64N(300))*365*24*int64(time.Hour))
	} else {
		c.clock = satAdd(c.clock, gap(c.rng, c.span, false))
	}
	now := c.clock
	switch k := c.rng.IntN(8); {
	case k < 2:
		now = satAdd(now, -c.rng.Int64N(c.span+1))
	case k < 4:
		now = satAdd(now, -c.rng.Int64N(c.span/8+1))
	case k < 5 && len(c.passed) > 0:
		now = c.passed[c.rng.IntN(len(c.passed))]
	}
	c.passed = append(c.passed, now)
	return now
}

// endModes are the schedules every cell runs: at each end of time, with
// small steps (each decision checked against the reference model, which
// never wraps) and with jumps of years (the bound checked).
var endModes = []struct {
	top, jumps bool
}{{false, false}, {true, false}, {false, true}, {true, true}}

func endRuns(t *testing.T) int {
	if testing.Short() {
		return 10
	}
	return 40
}

// TestBucketCellsAtTheEnds runs Bucket and Buckets (several slots sharing
// a HighWater) on schedules at both ends of int64 time: each slot admits
// exactly what the reference model does on small steps, and within the
// bound on every schedule.
func TestBucketCellsAtTheEnds(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, m := range endModes {
		for run := range endRuns(t) {
			c := randomBucket(rng)
			p, err := NewBucketParams(c.rate, c.per, c.burst)
			if err != nil {
				t.Fatal(err)
			}
			span := min(int64(c.per)/c.rate*c.burst, 1<<50)
			for _, cell := range bucketCells(p) {
				name := fmt.Sprintf("top %v jumps %v run %d: rate %d per %v burst %d, %d slots", m.top, m.jumps, run, c.rate, c.per, c.burst, cell.slots)
				clk := newEndClock(rng, span, m.top, m.jumps)
				refs := make([]*bucketRef, cell.slots)
				adm := make([][]admission, cell.slots)
				for i := range refs {
					refs[i] = newBucketRef(&p)
				}
				for range 300 {
					i, now := rng.IntN(cell.slots), clk.next()
					n := int64(1)
					if rng.IntN(3) == 0 {
						n = 1 + rng.Int64N(c.burst)
					}
					var r limit.Result
					short := n == 1 && rng.IntN(2) == 0
					if short {
						r.OK = cell.allow(i, now)
					} else {
						r, _ = cell.allowN(i, now, n)
					}
					want := refs[i].step(now, n)
					if short {
						want = limit.Result{OK: want.OK}
					}
					if !m.jumps && r != want {
						t.Fatalf("%s: slot %d, now %d n %d: got %+v, reference %+v", name, i, now, n, r, want)
					}
					if r.OK {
						adm[i] = append(adm[i], admission{now, n})
					}
				}
				for i := range adm {
					checkBucketBound(t, adm[i], &p)
				}
			}
		}
	}
}

// TestWindowCellsAtTheEnds is TestBucketCellsAtTheEnds for Window and
// Windows, with limits up to 50.
func TestWindowCellsAtTheEnds(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	wins := []time.Duration{1, 7, 4096, 8193, time.Microsecond, time.Second, time.Hour, MaxWindow}
	for _, m := range endModes {
		for run := range endRuns(t) {
			l := 1 + rng.Int64N(50)
			win := wins[rng.IntN(len(wins))]
			if rng.IntN(3) == 0 {
				win = time.Duration(1 + rng.Int64N(1<<40))
			}
			p, err := NewWindowParams(l, win)
			if err != nil {
				t.Fatal(err)
			}
			span := min(int64(p.Window()), 1<<50)
			for _, cell := range windowCells(p) {
				name := fmt.Sprintf("top %v jumps %v run %d: limit %d window %v, %d slots", m.top, m.jumps, run, l, p.Window(), cell.slots)
				clk := newEndClock(rng, span, m.top, m.jumps)
				refs := make([]*windowRef, cell.slots)
				uses := make([][]bound.Use, cell.slots)
				for i := range refs {
					refs[i] = newWindowRef(&p)
				}
				for range 300 {
					i, now := rng.IntN(cell.slots), clk.next()
					n := 1 + rng.Int64N(min(l, 4))
					var r limit.Result
					short := n == 1 && rng.IntN(2) == 0
					if short {
						r.OK = cell.allow(i, now)
					} else {
						r, _ = cell.allowN(i, now, n)
					}
					want := refs[i].step(now, n)
					if short {
						want = limit.Result{OK: want.OK}
					}
					if !m.jumps && r != want {
						t.Fatalf("%s: slot %d, now %d n %d: got %+v, reference %+v", name, i, now, n, r, want)
					}
					if r.OK {
						uses[i] = append(uses[i], bound.Use{At: p.clk.units(now), Cost: n})
					}
				}
				for i := range uses {
					if err := bound.Check(uses[i], 2*uint64(l), uint64(l), p.r.W); err != nil {
						t.Fatalf("%s: slot %d: %v", name, i, err)
					}
				}
			}
		}
	}
}

// tableOp decodes one request of a fuzzed schedule from 10 bytes: the
// slot, how the time is chosen (any int64, the last time plus or minus a
// little, or an end of time) and the cost.
func tableOp(b []byte, last int64, most int64) (slot int, now, n int64) {
	v := int64(uint64(b[2]) | uint64(b[3])<<8 | uint64(b[4])<<16 | uint64(b[5])<<24 |
		uint64(b[6])<<32 | uint64(b[7])<<40 | uint64(b[8])<<48 | uint64(b[9])<<56)
	switch b[1] % 8 {
	case 0, 1:
		now = v
	case 2, 3, 4:
		now = satAdd(last, v>>(b[1]>>3%64)) // a step of any size, either way
	case 5:
		now = last
	case 6:
		now = math.MaxInt64 - int64(b[9])
	default:
		now = math.MinInt64 + int64(b[9])
	}
	return int(b[0] % 3), now, 1 + int64(b[0]>>2)%most
}

func addTableSeeds(f *testing.F, p1, p2, p3 int64) {
	op := func(slot, kind byte, v int64) []byte {
		b := []byte{slot, kind, 0, 0, 0, 0, 0, 0, 0, 0}
		for i := range 8 {
			b[2+i] = byte(uint64(v) >> (8 * i))
		}
		return b
	}
	var s []byte
	s = append(s, op(0, 0, 1e12)...)
	s = append(s, op(1, 0, math.MaxInt64)...)
	s = append(s, op(0, 0, 1e12+1)...)
	f.Add(p1, p2, p3, s)
	s = nil
	for i := range 40 {
		s = append(s, op(byte(i), 2+8*byte(i%3), int64(365*24*time.Hour))...)
	}
	f.Add(p1, p2, p3, s)
	s = nil
	for i := range 20 {
		s = append(s, op(byte(i)|4<<2, 7, int64(i))...)
		s = append(s, op(byte(i)|4<<2, 6, int64(i))...)
	}
	f.Add(p1, p2, p3, s)
}

// FuzzBucketsShared drives three buckets of one table, sharing its
// HighWater, with times anywhere in int64 (jumps of any size either way,
// both ends of time) and checks each bucket's exact bound.
func FuzzBucketsShared(f *testing.F) {
	addTableSeeds(f, 1, int64(time.Second), 1)
	addTableSeeds(f, 1000, int64(time.Second), 50)
	addTableSeeds(f, 3, int64(time.Hour), MaxBurst)
	f.Fuzz(func(t *testing.T, events, period, burst int64, ops []byte) {
		p, err := NewBucketParams(events, time.Duration(period), burst)
		if err != nil {
			return
		}
		tb := &Buckets{p: p, words: make([]atomic.Uint64, 3)}
		adm := make([][]admission, 3)
		var last int64
		for ; len(ops) >= 10; ops = ops[10:] {
			i, now, n := tableOp(ops, last, burst)
			last = now
			ok := false
			if n == 1 && ops[1]&0x80 != 0 {
				ok = tb.AllowAt(i, now)
			} else {
				r, err := tb.AllowNAt(i, now, n)
				if err != nil || r.OK != (r.RetryAfter == 0) || !r.OK && r.RetryAfter != limit.Never && now > math.MaxInt64-int64(r.RetryAfter) {
					t.Fatalf("AllowNAt(%d, %d, %d) = %+v, %v", i, now, n, r, err)
				}
				ok = r.OK
			}
			if ok {
				adm[i] = append(adm[i], admission{now, n})
			}
		}
		for i := range adm {
			checkBucketBound(t, adm[i], &p)
		}
	})
}

// FuzzWindowsShared is FuzzBucketsShared for a table of windows.
func FuzzWindowsShared(f *testing.F) {
	addTableSeeds(f, 1, int64(time.Second), 0)
	addTableSeeds(f, 50, int64(time.Millisecond), 0)
	addTableSeeds(f, 7, int64(MaxWindow), 0)
	f.Fuzz(func(t *testing.T, l, win, _ int64, ops []byte) {
		p, err := NewWindowParams(l, time.Duration(win))
		if err != nil {
			return
		}
		tb := &Windows{p: p, words: make([]atomic.Uint64, 3)}
		uses := make([][]bound.Use, 3)
		var last int64
		for ; len(ops) >= 10; ops = ops[10:] {
			i, now, n := tableOp(ops, last, l)
			last = now
			ok := false
			if n == 1 && ops[1]&0x80 != 0 {
				ok = tb.AllowAt(i, now)
			} else {
				r, err := tb.AllowNAt(i, now, n)
				if err != nil || r.OK != (r.RetryAfter == 0) || !r.OK && r.RetryAfter != limit.Never && now > math.MaxInt64-int64(r.RetryAfter) {
					t.Fatalf("AllowNAt(%d, %d, %d) = %+v, %v", i, now, n, r, err)
				}
				ok = r.OK
			}
			if ok {
				uses[i] = append(uses[i], bound.Use{At: p.clk.units(now), Cost: n})
			}
		}
		for i := range uses {
			if err := bound.Check(uses[i], 2*uint64(l), uint64(l), p.r.W); err != nil {
				t.Fatalf("limit %d window %v, slot %d: %v", l, p.Window(), i, err)
			}
		}
	})
}

// TestSameWordRaisesMark: an admission whose word comes out bit for bit
// the same (written a whole number of wraps after the old one, with the
// same deficit or counts) still moves the word's time to now, so it must
// raise the HighWater before it counts as written; otherwise the next step
// decodes the word at the old time and refills what was just taken.
func TestSameWordRaisesMark(t *testing.T) {
	bp, _ := NewBucketParams(48, time.Second, 2)
	wp, _ := NewWindowParams(2, time.Second)
	bs := &Buckets{p: bp, words: make([]atomic.Uint64, 2)}
	ws := &Windows{p: wp, words: make([]atomic.Uint64, 2)}
	for _, c := range []struct {
		name   string
		wrap   int64
		allowN func(now, n int64) (limit.Result, error)
	}{
		{"Bucket", int64(bp.Wrap()), (&Bucket{c: bucketCell{p: bp}}).AllowNAt},
		{"Buckets", int64(bp.Wrap()), func(now, n int64) (limit.Result, error) { return bs.AllowNAt(1, now, n) }},
		{"Window", int64(wp.Wrap()), (&Window{c: windowCell{p: wp}}).AllowNAt},
		{"Windows", int64(wp.Wrap()), func(now, n int64) (limit.Result, error) { return ws.AllowNAt(1, now, n) }},
	} {
		t1 := int64(1e12)
		t2 := t1 + 1000*c.wrap // the same unit modulo the wrap
		for _, now := range []int64{t1, t2} {
			if r, _ := c.allowN(now, 1); !r.OK {
				t.Fatalf("%s: denied one unit at %d", c.name, now)
			}
		}
		if r, _ := c.allowN(t2+3e6, 2); r.OK {
			t.Errorf("%s: admitted 2 units 3ms after admitting 1 of a burst of 2", c.name)
		}
	}
}
