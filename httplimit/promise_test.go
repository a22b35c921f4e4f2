package httplimit

import (
	"github.com/cellrate/cellrate/httplimit/clientkey"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// step is one request of a schedule: at a time, from a client, of a cost.
type step struct {
	at   int64
	key  string
	cost int64
}

// twin is a Limiter of the policy, driven in process at the times steps
// set, recording the last denial's Decision.
type twin struct {
	clk  clock
	h    http.Handler
	last Decision
}

func newTwin(t *testing.T, ps Policy) *twin {
	tw := &twin{}
	ps.Key = clientkey.Header("K")
	ps.Cost = func(r *http.Request) int64 { n, _ := strconv.ParseInt(r.Header.Get("N"), 10, 64); return n }
	lim := mustNew(t, []Policy{ps}, WithClock(tw.clk.now), WithDenyHandler(func(w http.ResponseWriter, r *http.Request, d Decision) {
		tw.last = d
		denyTooMany(w, r, d)
	}))
	tw.h = lim.Wrap(okHandler)
	return tw
}

func (tw *twin) send(s step) *httptest.ResponseRecorder {
	tw.clk.ns.Store(s.at)
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("K", s.key)
	r.Header.Set("N", strconv.FormatInt(s.cost, 10))
	w := httptest.NewRecorder()
	tw.h.ServeHTTP(w, r)
	return w
}

// replay returns a fresh twin after the steps.
func replay(t *testing.T, ps Policy, hist []step) *twin {
	tw := newTwin(t, ps)
	for _, s := range hist {
		tw.send(s)
	}
	return tw
}

// admits reports whether a fresh twin after hist admits s.
func admits(t *testing.T, ps Policy, hist []step, s step) bool {
	return replay(t, ps, hist).send(s).Code == 200
}

// TestHeaderPromises: every promise the fields make, checked by what the
// limiter then does, over random schedules of two clients with costs 1
// and 2, for a policy with a client limit, a global one, and both, at
// token times that are not whole seconds (1.5 s, 1.25 s). After each
// response (checked on a replay of the schedule so far, so the check
// changes nothing):
//   - r: exactly r requests of cost 1 from the client pass at that instant;
//   - a denial: its wait W (Decision.RetryAfter) is exact, the request
//     denied at W-1ns and admitted at W; Retry-After and t are W in whole
//     seconds rounded up (at least 1), so the request is admitted at
//     Retry-After seconds and, when W is not whole, denied a second before;
//   - admitted, with one limit: at t seconds the limit is full (q requests
//     pass at once), and not a token's time and a second before;
//   - RateLimit-Policy: q and w of each limit.
func TestHeaderPromises(t *testing.T) {
	client := Rate(2, 3*time.Second, 3)
	global := Rate(4, 5*time.Second, 4)
	for _, tc := range []struct {
		name   string
		ps     Policy
		policy string
	}{
		{"client", Policy{Name: "c", Client: client}, `"c";q=3;w=5`},
		{"global", Policy{Name: "g", Global: global}, `"g-global";q=4;w=5`},
		{"both", Policy{Name: "b", Client: client, Global: global}, `"b";q=3;w=5, "b-global";q=4;w=5`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(21, uint64(len(tc.name))))
			main := newTwin(t, tc.ps)
			var hist []step
			now := int64(time.Hour)
			steps := 40
			if testing.Short() {
				steps = 20
			}
			denials := 0
			for range steps {
				now += rng.Int64N(int64(1500 * time.Millisecond))
				s := step{at: now, key: []string{"A", "B"}[rng.IntN(2)], cost: 1 + rng.Int64N(2)}
				w := main.send(s)
				if p := w.Header().Get("RateLimit-Policy"); p != tc.policy {
					t.Fatalf("RateLimit-Policy %q, want %q", p, tc.policy)
				}
				_, r, reset := rateLimitField(t, w.Header().Get("RateLimit"))
				after := append(hist, s)
				checkR(t, tc.ps, after, s, r)
				if w.Code == 429 {
					denials++
					checkWait(t, tc.ps, hist, s, main.last, w, reset)
				} else if tc.name != "both" {
					checkFull(t, tc.ps, after, s, reset)
				}
				hist = after
			}
			if denials < 3 || denials > steps-3 {
				t.Fatalf("%d denials of %d: the schedule does not test both ways", denials, steps)
			}
		})
	}
}

// checkR: exactly r requests of cost 1 pass at the instant.
func checkR(t *testing.T, ps Policy, hist []step, s step, r int64) {
	t.Helper()
	tw := replay(t, ps, hist)
	n := int64(0)
	for tw.send(step{at: s.at, key: s.key, cost: 1}).Code == 200 {
		n++
		if n > 10 {
			break
		}
	}
	if n != r {
		t.Fatalf("after %+v: r=%d, but %d requests pass at that instant", s, r, n)
	}
}

// checkWait: the denial's wait is exact and its seconds never short.
func checkWait(t *testing.T, ps Policy, hist []step, s step, d Decision, w *httptest.ResponseRecorder, reset int64) {
	t.Helper()
	wait := int64(d.RetryAfter)
	ra, err := strconv.ParseInt(w.Header().Get("Retry-After"), 10, 64)
	if err != nil || ra != reset || ra != max(1, (wait+1e9-1)/1e9) || d.reset != ra {
		t.Fatalf("denial %+v: Retry-After %q, t=%d, wait %v", s, w.Header().Get("Retry-After"), reset, d.RetryAfter)
	}
	at := func(dt int64) bool { return admits(t, ps, hist, step{at: s.at + dt, key: s.key, cost: s.cost}) }
	if wait <= 0 || at(wait-1) || !at(wait) || !at(ra*1e9) {
		t.Fatalf("denial %+v: wait %v is not exact, or Retry-After %d s is short", s, d.RetryAfter, ra)
	}
	if wait%1e9 != 0 && ra > 1 && at((ra-1)*1e9) {
		t.Fatalf("denial %+v: admitted at %d s, yet Retry-After says %d", s, ra-1, ra)
	}
}

// checkFull: with one limit, it is full t seconds after an admission, and
// not yet a second before unless t rounds.
func checkFull(t *testing.T, ps Policy, hist []step, s step, reset int64) {
	t.Helper()
	q := max(ps.Client.burst, ps.Global.burst)
	full := func(dt int64) bool {
		tw := replay(t, ps, hist)
		for range q {
			if tw.send(step{at: s.at + dt, key: s.key, cost: 1}).Code != 200 {
				return false
			}
		}
		return true
	}
	if !full(reset * 1e9) {
		t.Fatalf("after %+v: not full t=%d s later", s, reset)
	}
	// r is whole units, so t may count up to one token's time too many
	// before it rounds up; never more.
	l := ps.Client
	if !l.set {
		l = ps.Global
	}
	if early := (reset-1)*1e9 - int64(l.period)/l.events - 1; early > 0 && full(early) {
		t.Fatalf("after %+v: t=%d s, yet full at %v", s, reset, time.Duration(early))
	}
}

// TestRetryAfterAcrossLimits: the client limit denies while the global
// one is also empty and waits longer: Retry-After is the global wait, not
// the client's, and the request is admitted then, not a second after the
// client's wait.
func TestRetryAfterAcrossLimits(t *testing.T) {
	ps := Policy{Name: "p", Client: Rate(1, time.Second, 1),
		Global: Rate(1, 5*time.Second, 2)}
	t0 := int64(time.Hour)
	hist := []step{{t0, "A", 1}, {t0, "B", 1}}
	tw := replay(t, ps, hist)
	w := tw.send(step{t0, "A", 1})
	if w.Code != 429 || w.Header().Get("Retry-After") != "5" || w.Header().Get("RateLimit") != `"p-global";r=0;t=5` {
		t.Fatalf("denial: %d %v", w.Code, w.Header())
	}
	if admits(t, ps, hist, step{t0 + 1e9, "A", 1}) || !admits(t, ps, hist, step{t0 + 5e9, "A", 1}) {
		t.Fatal("the request is not admitted exactly at Retry-After")
	}
	// A fresh client denied by the global limit alone: its own limit
	// holds 1, the global none, and it waits for the global one.
	w = replay(t, ps, hist).send(step{t0, "C", 1})
	if w.Code != 429 || w.Header().Get("Retry-After") != "5" || w.Header().Get("RateLimit") != `"p-global";r=0;t=5` {
		t.Fatalf("global denial: %d %v", w.Code, w.Header())
	}
}

// TestRetryAfterFraction: a wait of 1.5 s is Retry-After 2, never 1,
// for each kind of limit.
func TestRetryAfterFraction(t *testing.T) {
	l := Rate(2, 3*time.Second, 1)
	for _, ps := range []Policy{{Name: "c", Client: l}, {Name: "g", Global: l}} {
		t0 := int64(time.Hour)
		hist := []step{{t0, "A", 1}}
		tw := replay(t, ps, hist)
		w := tw.send(step{t0, "A", 1})
		_, _, reset := rateLimitField(t, w.Header().Get("RateLimit"))
		if w.Code != 429 || w.Header().Get("Retry-After") != "2" || reset != 2 ||
			tw.last.RetryAfter < 1500*time.Millisecond || tw.last.RetryAfter > 1501*time.Millisecond {
			t.Fatalf("%s: %d Retry-After %q t=%d wait %v", ps.Name, w.Code, w.Header().Get("Retry-After"), reset, tw.last.RetryAfter)
		}
		if admits(t, ps, hist, step{t0 + 1e9, "A", 1}) || !admits(t, ps, hist, step{t0 + 2e9, "A", 1}) {
			t.Fatalf("%s: not admitted exactly by Retry-After", ps.Name)
		}
	}
}

// TestFullIn: the seconds n tokens take are ceil(n*period/events/1s),
// exactly, against math/big, saturated at 2^62.
func TestFullIn(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// The edges of the saturation: a quotient of exactly 1e9 * 2^64 ns,
	// 2^62 s with a fraction, 2^62 s exactly, and a cost of 0.
	edges := []struct {
		n      int64
		events int64
		period time.Duration
	}{{1 << 62, 1, 4e9}, {4611686013815701891, 1, 1e9 + 1}, {1 << 62, 1, 1e9}, {1 << 62, 3, 3e9}, {0, 1, 1e9}, {-1, 1, 1e9}}
	for i := range 20000 + len(edges) {
		s := limitSpec{events: 1 + rng.Int64N(1<<uint(rng.IntN(62))), period: time.Duration(1 + rng.Int64N(1<<uint(rng.IntN(62))))}
		n := rng.Int64N(1 << uint(rng.IntN(62)))
		if i%4 == 0 { // whole seconds and their neighbours
			s.events, s.period = 1, time.Duration(1e9*(1+rng.Int64N(100))+rng.Int64N(3)-1)
		}
		if i >= 20000 {
			e := edges[i-20000]
			n, s.events, s.period = e.n, e.events, e.period
		}
		x := new(big.Int).Mul(big.NewInt(n), big.NewInt(int64(s.period)))
		d := new(big.Int).Mul(big.NewInt(s.events), big.NewInt(1e9))
		want, m := new(big.Int).DivMod(x, d, new(big.Int))
		if m.Sign() != 0 {
			want.Add(want, big.NewInt(1))
		}
		if want.Cmp(big.NewInt(1<<62)) > 0 {
			want.SetInt64(1 << 62)
		}
		if n < 0 {
			want.SetInt64(0)
		}
		if got := s.fullIn(n); got != want.Int64() {
			t.Fatalf("fullIn(%d) with %d per %d: %d, want %v", n, s.events, s.period, got, want)
		}
	}
}
