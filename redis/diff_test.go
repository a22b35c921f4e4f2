package redis

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// schedule returns count decision times and costs: steps forward, repeated
// times, stale times, jumps far ahead and far back (past the scripts'
// 2^22-second "far" limit), all within [-2^62, 2^62).
func schedule(rng *rand.Rand, count int, interval, burst int64) (times, costs []int64) {
	now := rng.Int64N(1<<62) - 1<<61
	if rng.IntN(2) == 0 {
		now = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC).UnixNano() + rng.Int64N(1e12)
	}
	clamp := func(x int64) int64 { return max(-1<<62, min(x, 1<<62-1)) }
	for range count {
		switch k := rng.IntN(100); {
		case k < 40:
			now = clamp(now + rng.Int64N(interval+1))
		case k < 55: // repeated
		case k < 75:
			now = clamp(now - rng.Int64N(interval*burst+2))
		case k < 85:
			now = clamp(now + rng.Int64N(interval*(burst+2)+1))
		case k < 90:
			now = clamp(now + rng.Int64N(1e9))
		case k < 94:
			now = clamp(now + 1e16 + rng.Int64N(1e16)) // far ahead
		case k < 97:
			now = clamp(now - 5e15 - rng.Int64N(1e16)) // far back
		case k < 99:
			now = clamp(now - rng.Int64N(1e10))
		default: // an end of the range
			now = []int64{-1 << 62, 1<<62 - 1}[rng.IntN(2)]
		}
		times = append(times, now)
		var n int64
		switch k := rng.IntN(10); {
		case k < 5:
			n = 1
		case k < 6:
			n = 0
		case k < 8:
			n = burst
		default:
			n = rng.Int64N(burst + 1)
		}
		costs = append(costs, n)
	}
	return times, costs
}

type gcraCase struct {
	events int64
	period time.Duration
	burst  int64
}

func gcraCases(rng *rand.Rand) []gcraCase {
	cs := []gcraCase{
		{1, time.Second, 1}, {3, time.Second, 5}, {4, time.Second, 2}, {7, time.Hour, 3},
		{1000, time.Second, 1000}, {500, time.Second, 1000}, {1, time.Nanosecond, 1},
		{2, 3 * time.Nanosecond, 4}, {1e9, time.Second, 1 << 20}, {3, 1 << 47, 1},
		{1, 1<<48 - 1, 1}, {1, time.Millisecond, 1<<28 - 1}, {6, time.Minute, 100},
		{999999937, 1<<40 + 13, 3}, // a fractional interval with a big reduced ratio
		{2, 1<<48 - 1, 2},          // the largest ratio p, 2^48-1, and burst*j 2^48-2
	}
	for range 16 {
		ev := 1 + rng.Int64N(int64(1)<<rng.IntN(20))
		per := time.Duration(ev + rng.Int64N(int64(1)<<(10+rng.IntN(34))))
		cs = append(cs, gcraCase{ev, per, 1 + rng.Int64N(int64(1)<<rng.IntN(12))})
	}
	return cs
}

// TestGCRAMatchesStep runs random schedules through package gcra's
// Params.Step and through the script on a real server, at caller times, and
// requires the same decision, Remaining and RetryAfter every time, and the
// same state: the key's origin and steps map exactly onto Go's TAT.
func TestGCRAMatchesStep(t *testing.T) {
	t.Parallel() // waits on round trips; keys in a database of its own
	_, c := server(t)
	rng := rand.New(rand.NewPCG(3, 4))
	count := 300
	if testing.Short() {
		count = 120
	}
	checked := 0
	for ci, tc := range gcraCases(rng) {
		gp, err := newGCRAParams(tc.events, tc.period, tc.burst)
		if err != nil {
			t.Logf("case %v: %v", tc, err)
			continue
		}
		ref, err := newGoGCRA(tc.events, tc.period, tc.burst)
		if err != nil {
			t.Fatal(err)
		}
		l, err := NewGCRA(c, fmt.Sprintf("d%d", ci), tc.events, tc.period, tc.burst, WithGrace(300*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		l.eval.Store(ci%3 == 2) // the script a server without Functions runs
		interval := max(1, int64(tc.period)/tc.events)
		times, costs := schedule(rng, count, interval, tc.burst)
		var tat uint64
		for i, now := range times {
			n := costs[i]
			next, want, werr := stepGoGCRA(ref, tat, now, n)
			got, gerr := l.allowNAt(bg, "k", now, n)
			if got != want || gerr != werr {
				t.Fatalf("case %v step %d: now %d n %d tat %d: script %+v %v, gcra.Step %+v %v",
					tc, i, now, n, tat, got, gerr, want, werr)
			}
			tat = next
			st := rawState(t, c, l.keyOf("k"), 8)
			if st == nil {
				if tat != 0 {
					t.Fatalf("case %v step %d: no key, Go's TAT %d", tc, i, tat)
				}
				continue
			}
			m, ok := gp.gcraTAT(int64(st[0]), int64(st[1]), int64(st[2]))
			if !ok || m != tat || st[1] < 0 || st[1] >= 1e9 {
				t.Fatalf("case %v step %d: key holds %v = TAT %d (%v), Go's %d", tc, i, st, m, ok, tat)
			}
			checked++
		}
	}
	t.Logf("%d decisions with states compared", checked)
}

// TestTimeLimits decides at the ends of the caller's time range, where
// the scripts' split times and the Go steps' TATs are largest, with both
// limiters at their largest parameters, against the Go steps.
func TestTimeLimits(t *testing.T) {
	_, c := server(t)
	gref, _ := newGoGCRA(2, 1<<48-1, 2)
	g, err := NewGCRA(c, "lg", 2, 1<<48-1, 2, WithGrace(300*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	wref, _ := newGoWindow(1<<32-1, maxWindow)
	w, _ := NewWindow(c, "lw", 1<<32-1, maxWindow, WithGrace(300*24*time.Hour))
	const lo, hi = -1 << 62, 1<<62 - 1
	for _, key := range []string{"a", "b"} {
		var tat uint64
		var ws goWindowState
		times := []int64{lo, lo, lo + 1, lo + 1<<48, lo + 1<<49, lo, hi - 1<<49, hi - 1, hi, hi, lo}
		if key == "b" {
			times = []int64{hi, hi, lo, hi - 1, hi - (1<<48 - 1), hi}
		}
		for i, now := range times {
			for _, n := range []int64{1, 2} {
				next, want, _ := stepGoGCRA(gref, tat, now, n)
				if got, err := g.allowNAt(bg, key, now, n); err != nil || got != want {
					t.Fatalf("gcra %s step %d at %d n %d: %+v %v, want %+v", key, i, now, n, got, err, want)
				}
				tat = next
				wn := n << 30
				wnext, wwant, _ := stepGoWindow(wref, ws, now, wn)
				if got, err := w.allowNAt(bg, key, now, wn); err != nil || got != wwant {
					t.Fatalf("window %s step %d at %d n %d: %+v %v, want %+v", key, i, now, wn, got, err, wwant)
				}
				ws = wnext
			}
		}
	}
}

// TestWindowMatchesStep is TestGCRAMatchesStep for package window: the
// key holds Go's State exactly (Start as seconds and ns).
func TestWindowMatchesStep(t *testing.T) {
	t.Parallel() // waits on round trips; keys in a database of its own
	_, c := server(t)
	rng := rand.New(rand.NewPCG(5, 6))
	count := 300
	if testing.Short() {
		count = 120
	}
	type wcase struct {
		limit int64
		w     time.Duration
	}
	cs := []wcase{{1, time.Second}, {10, time.Second}, {100, time.Minute}, {3, 7}, {1<<32 - 1, time.Hour},
		{5, maxWindow}, {1000, 24 * time.Hour}, {7, 1<<26 + 1}, {1 << 31, 1<<50 - 1}}
	for range 12 {
		cs = append(cs, wcase{1 + rng.Int64N(int64(1)<<rng.IntN(32)), time.Duration(1 + rng.Int64N(int64(1)<<(1+rng.IntN(49))))})
	}
	checked := 0
	for ci, tc := range cs {
		ref, err := newGoWindow(tc.limit, tc.w)
		if err != nil {
			t.Fatal(err)
		}
		l, err := NewWindow(c, fmt.Sprintf("w%d", ci), tc.limit, tc.w, WithGrace(300*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		l.eval.Store(ci%3 == 2) // the script a server without Functions runs
		interval := max(1, int64(tc.w)/tc.limit)
		times, costs := schedule(rng, count, interval, min(tc.limit, 1<<40))
		var s goWindowState
		for i, now := range times {
			n := costs[i]
			next, want, werr := stepGoWindow(ref, s, now, n)
			got, gerr := l.allowNAt(bg, "k", now, n)
			if got != want || gerr != werr {
				t.Fatalf("case %v step %d: now %d n %d state %+v: script %+v %v, window.Step %+v %v",
					tc, i, now, n, s, got, gerr, want, werr)
			}
			s = next
			st := rawState(t, c, l.keyOf("k"), 4)
			if st == nil {
				if s.Prev|s.Cur != 0 {
					t.Fatalf("case %v step %d: no key, Go's state %+v", tc, i, s)
				}
				continue
			}
			m := goWindowState{Start: int64(st[0])*1e9 + int64(st[1]), Prev: uint32(st[2]), Cur: uint32(st[3])}
			if m != s || st[1] < 0 || st[1] >= 1e9 {
				t.Fatalf("case %v step %d: key holds %v, Go's state %+v", tc, i, st, s)
			}
			checked++
		}
	}
	t.Logf("%d decisions with states compared", checked)
}

// TestGiveBackMatchesStep checks a TwoTier's give-back against package
// gcra's Step: a borrow of m at t0 whose r units go back with the next
// borrow at t1 leaves the state a borrow of m-r at t0 would have (r capped
// where the TAT would pass now: those units would refill anyway); when
// anything was admitted in between, nothing goes back.
func TestGiveBackMatchesStep(t *testing.T) {
	_, c := server(t)
	rng := rand.New(rand.NewPCG(9, 10))
	for ci, tc := range gcraCases(rng)[:16] {
		gp, err := newGCRAParams(tc.events, tc.period, tc.burst)
		if err != nil {
			continue
		}
		ref, _ := newGoGCRA(tc.events, tc.period, tc.burst)
		l, _ := NewGCRA(c, fmt.Sprintf("gbd%d", ci), tc.events, tc.period, tc.burst, WithGrace(300*24*time.Hour))
		interval := max(1, int64(tc.period)/tc.events)
		now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC).UnixNano() + rng.Int64N(1e12)
		var tat uint64
		last, lastM := "", int64(0)
		var reserved int64
		take := func(k, give int64) {
			t.Helper()
			// The model: undo give of the last borrow if the key holds its
			// value, capped at what keeps the TAT at or after now.
			q := new(big.Int).Add(big.NewInt(now), new(big.Int).Lsh(big.NewInt(1), 63))
			q.Mul(q, new(big.Int).SetUint64(gp.e)).Quo(q, new(big.Int).SetUint64(gp.p))
			cur := rawKey(t, c, l.keyOf("k"))
			if give > 0 && cur == last && cur != "" && tat > q.Uint64() {
				back := min(give, int64((tat-q.Uint64())/gp.j))
				tat -= uint64(back) * gp.j
			}
			_, r0, _ := stepGoGCRA(ref, tat, now, 0)
			m := min(k, r0.Remaining)
			next, want, _ := stepGoGCRA(ref, tat, now, max(m, 1))
			want.RetryAfter = 0
			rcap := 1 + rng.Int64N(k)
			if m == 0 {
				rcap = min(rcap, 4096) // the model takes them one by one
				next, want, m = reserve(t, ref, gp, tat, q.Uint64(), now, rcap)
				reserved += m
			}
			got, gm, written, err := l.decide(bg, "k", nil, true, now, k, true, true, give, rcap, last)
			if err != nil || gm != m || got.OK != (m > 0) || got.Remaining != want.Remaining || got.RetryAfter != want.RetryAfter {
				t.Fatalf("case %v at %d: take %d give %d: %+v m %d %v, want m %d %+v", tc, now, k, give, got, gm, err, m, want)
			}
			tat = next
			if written != "" {
				last = written
			}
			lastM = m
			if st := rawState(t, c, l.keyOf("k"), 8); st != nil {
				if g, ok := gp.gcraTAT(int64(st[0]), int64(st[1]), int64(st[2])); !ok || g != tat {
					t.Fatalf("case %v: state %v = %d, model %d", tc, st, g, tat)
				}
			}
		}
		for range 60 {
			if rng.IntN(2) == 0 { // else at once: the key empties, a borrow reserves
				now += rng.Int64N(interval*(tc.burst+1) + 1)
			}
			k := 1 + rng.Int64N(tc.burst)
			switch rng.IntN(4) {
			case 0: // someone else admits in between
				next, want, _ := stepGoGCRA(ref, tat, now, 1)
				if got, _ := l.allowNAt(bg, "k", now, 1); got != want {
					t.Fatalf("case %v: %+v, want %+v", tc, got, want)
				}
				tat = next
				fallthrough
			default:
				give := rng.Int64N(lastM + 1)
				if rng.IntN(2) == 0 {
					give = 0
				}
				take(k, give)
			}
		}
		if reserved == 0 {
			t.Errorf("case %v: no borrow reserved", tc)
		}
	}
}

// reserve is the model of a borrow of k that finds nothing at now (q in
// steps): up to k decisions of one, each at the first time it is admitted,
// while the TAT stays within two bursts of now; else a denial of one. It returns the state, the Result
// (the wait is the first's) and the units reserved.
func reserve(t *testing.T, ref goGCRA, gp gcraParams, tat, q uint64, now, k int64) (uint64, result, int64) {
	t.Helper()
	room := (2*int64(gp.burst*gp.j) - int64(tat-q)) / int64(gp.j)
	if room < 1 || int64(tat-q) > 2*int64(gp.burst*gp.j) {
		_, d, _ := stepGoGCRA(ref, tat, now, 1)
		return tat, d, 0
	}
	k = min(k, room)
	var first time.Duration
	for i := range k {
		_, d, _ := stepGoGCRA(ref, tat, now, 1)
		if d.OK || d.RetryAfter <= 0 {
			t.Fatalf("event %d of a reservation: %+v, want a denial with a wait", i, d)
		}
		next, r, _ := stepGoGCRA(ref, tat, now+int64(d.RetryAfter), 1)
		if !r.OK {
			t.Fatalf("event %d of a reservation not admitted after its wait %v", i, d.RetryAfter)
		}
		if i == 0 {
			first = d.RetryAfter
		}
		tat = next
	}
	return tat, result{OK: true, RetryAfter: first}, k
}

func rawKey(t *testing.T, c *goredis.Client, key string) string {
	v, err := c.Get(bg, key).Result()
	if err != nil && err != goredis.Nil {
		t.Fatal(err)
	}
	return v
}
