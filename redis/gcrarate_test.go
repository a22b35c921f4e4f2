package redis

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

// rateKey is the model of one GCRA key across changes of rate: the TAT in
// package gcra's steps of the rate that wrote it, the key's latest write
// and its last conversion.
type rateKey struct {
	w       gcraParams // the writer's; w.p == 0: no key
	tat     uint64
	h, c    int64
	changed bool // c is set
}

type rateSet struct {
	events int64
	per    time.Duration
	gp     gcraParams
	ref    goGCRA
}

// owed is the events a TAT of w owes at now, rounded up.
func owed(w gcraParams, tat uint64, now int64) *big.Int {
	u := new(big.Int).SetUint64(uint64(now) ^ 1<<63)
	lead := new(big.Int).Mul(new(big.Int).SetUint64(tat), new(big.Int).SetUint64(w.p))
	lead.Sub(lead, u.Mul(u, new(big.Int).SetUint64(w.e)))
	if lead.Sign() <= 0 {
		return new(big.Int)
	}
	d := new(big.Int).Mul(new(big.Int).SetUint64(w.p), new(big.Int).SetUint64(w.j))
	lead.Add(lead, d).Sub(lead, big.NewInt(1))
	return lead.Quo(lead, d)
}

// decide is one decision of rs at now on the key, as the doc of SetRate
// states it. It reports whether it wrote the key, whether the key changed
// rate, and which stale rule denied it (1: another rate before the key's
// latest write, 2: before its last change; 0: none).
func (k *rateKey) decide(t *testing.T, rs *rateSet, now, n int64) (result, bool, bool, int) {
	t.Helper()
	tat, conv := k.tat, false
	if k.w.p != 0 && (k.w.p != rs.gp.p || k.w.e != rs.gp.e || k.w.j != rs.gp.j) {
		if now < k.h {
			if n == 0 {
				return result{OK: true}, false, false, 0
			}
			return result{RetryAfter: time.Duration(k.h - now)}, false, false, 1
		}
		tat, conv = 0, true
		if o := owed(k.w, k.tat, now); o.Sign() > 0 {
			// The first step at or after now, plus the events owed.
			u := new(big.Int).SetUint64(uint64(now) ^ 1<<63)
			u.Mul(u, new(big.Int).SetUint64(rs.gp.e))
			u.Add(u, new(big.Int).SetUint64(rs.gp.p-1)).Quo(u, new(big.Int).SetUint64(rs.gp.p))
			u.Add(u, o.Mul(o, new(big.Int).SetUint64(rs.gp.j)))
			if !u.IsUint64() {
				t.Fatalf("converted TAT %v", u)
			}
			tat = u.Uint64()
		}
	}
	next, r, err := stepGoGCRA(rs.ref, tat, now, n)
	if err != nil {
		t.Fatal(err)
	}
	if !conv && k.changed && now < k.c && n > 0 {
		w := now
		if !r.OK {
			w += int64(r.RetryAfter)
		}
		return result{RetryAfter: time.Duration(max(w, k.c) - now)}, false, false, 2
	}
	if n == 0 || (!r.OK && !conv) {
		return r, false, false, 0
	}
	if !r.OK {
		next = tat
	}
	k.w, k.tat = rs.gp, next
	k.h = max(k.h, now)
	if conv {
		k.h, k.c, k.changed = now, now, true
	}
	return r, true, conv, 0
}

type stage struct {
	from int64
	rate *big.Rat // events per ns
}

// TestGCRASetRateMatchesModel: two GCRA limiters share a key, each
// changing its rate at random (SetRate and SetRateAt, up and down, whole
// and fractional intervals), deciding at times that step forward, repeat
// and go back; every decision on a real server must be the model's (the
// conversion SetRate's doc states), and on every interval of the admitted
// times the admitted count must be at most the burst plus the integral of
// the rate in force, each rate from the decision that converted the key to
// it.
func TestGCRASetRateMatchesModel(t *testing.T) {
	_, c := server(t)
	rates := []struct {
		events int64
		per    time.Duration
	}{{10, time.Second}, {3, time.Second}, {7, 3 * time.Second}, {40, time.Second}, {1, 700 * time.Millisecond}, {1000, 7 * time.Second}}
	var sets []*rateSet
	for _, r := range rates {
		gp, err := newGCRAParams(r.events, r.per, 4)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := newGoGCRA(r.events, r.per, 4)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, &rateSet{r.events, r.per, gp, ref})
	}
	count := 500
	if testing.Short() {
		count = 200
	}
	for run, eval := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(23, uint64(run)))
		var ls [2]*Limiter
		cur := [2]*rateSet{sets[0], sets[0]}
		for i := range ls {
			l, err := NewGCRA(c, fmt.Sprintf("gs%d:", run), 10, time.Second, 4, WithGrace(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			l.eval.Store(eval)
			ls[i] = l
		}
		var k rateKey
		var admitted []decision
		var stages []stage
		conversions := 0
		var stale [3]int
		now := time.Now().UnixNano()
		for i := range count {
			p := rng.IntN(2)
			if rng.IntN(8) == 0 {
				rs := sets[rng.IntN(len(sets))]
				var err error
				if rs.per%time.Second == 0 && rng.IntN(2) == 0 {
					err = ls[p].SetRateAt(0, float64(rs.events)/float64(rs.per/time.Second))
				} else {
					err = ls[p].SetRate(rs.events, rs.per)
				}
				if err != nil {
					t.Fatal(err)
				}
				cur[p] = rs
			}
			switch x := rng.IntN(10); {
			case x < 6:
				now += rng.Int64N(int64(time.Second) / 2)
			case x < 8: // repeated
			default:
				now -= rng.Int64N(int64(time.Second) * 3 / 10)
			}
			n := rng.Int64N(5)
			want, wrote, conv, rule := k.decide(t, cur[p], now, n)
			stale[rule]++
			got, err := ls[p].allowNAt(bg, "k", now, n)
			if err != nil || got != want {
				t.Fatalf("run %d decision %d (limiter %d at %d/%v): now %d n %d key %+v: %+v %v, model %+v",
					run, i, p, cur[p].events, cur[p].per, now, n, k, got, err, want)
			}
			if conv {
				conversions++
				stages = append(stages, stage{now, big.NewRat(cur[p].events, int64(cur[p].per))})
			}
			if len(stages) == 0 && wrote {
				stages = append(stages, stage{now, big.NewRat(cur[p].events, int64(cur[p].per))})
			}
			if got.OK && n > 0 {
				admitted = append(admitted, decision{now, n, 0})
			}
		}
		if conversions < 10 || stale[1] == 0 || stale[2] == 0 {
			t.Fatalf("run %d: %d conversions, stale denials %v: the schedule does not test them", run, conversions, stale[1:])
		}
		checkRateBound(t, admitted, stages, 4)
		t.Logf("run %d: %d admissions, %d conversions, stale denials %v", run, len(admitted), conversions, stale[1:])
	}
}

// checkRateBound checks, on every interval [a, b] of admitted times, at
// most burst + the integral over [a, b] of the stages' rates (the first
// stage's rate before its start).
func checkRateBound(t *testing.T, admitted []decision, stages []stage, burst int64) {
	t.Helper()
	sort.Slice(admitted, func(i, j int) bool { return admitted[i].at < admitted[j].at })
	for i := 1; i < len(stages); i++ {
		if stages[i].from < stages[i-1].from {
			t.Fatalf("conversion at %d before the last at %d", stages[i].from, stages[i-1].from)
		}
	}
	// F(x): the integral of the rate from the first admission to x.
	origin := admitted[0].at
	F := func(x int64) *big.Rat {
		sum := new(big.Rat)
		for i, s := range stages {
			lo := max(origin, s.from)
			if i == 0 {
				lo = origin
			}
			hi := x
			if i+1 < len(stages) {
				hi = min(x, stages[i+1].from)
			}
			if hi > lo {
				sum.Add(sum, new(big.Rat).Mul(s.rate, new(big.Rat).SetInt64(hi-lo)))
			}
		}
		return sum
	}
	fs := make([]*big.Rat, len(admitted))
	for i, a := range admitted {
		fs[i] = F(a.at)
	}
	tight := new(big.Rat).SetInt64(-1 << 62)
	for i := range admitted {
		var sum int64
		for j := i; j < len(admitted); j++ {
			sum += admitted[j].n
			slack := new(big.Rat).Sub(fs[j], fs[i])
			slack.Add(slack, big.NewRat(burst-sum, 1))
			if slack.Sign() < 0 {
				t.Fatalf("%d admitted in [%d, %d]: bound %v", sum, admitted[i].at, admitted[j].at,
					new(big.Rat).Add(new(big.Rat).Sub(fs[j], fs[i]), big.NewRat(burst, 1)).FloatString(3))
			}
			if d := new(big.Rat).Neg(slack); d.Cmp(tight) > 0 {
				tight = d
			}
		}
	}
	t.Logf("tightest interval: %s under the bound", new(big.Rat).Neg(tight).FloatString(3))
}

// TestGCRAStaleAcrossChange: the two decisions SetRate's doc denies, each
// in the schedule where admitting it would pass the bound at one instant
// (burst 4: at most 4 admitted at any one time).
func TestGCRAStaleAcrossChange(t *testing.T) {
	_, c := server(t)
	const s = int64(time.Second)
	t0 := time.Now().UnixNano()
	allow := func(l *Limiter, key string, at, n int64) result {
		t.Helper()
		r, err := l.allowNAt(bg, key, at, n)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	fast, _ := NewGCRA(c, "sx:", 1000, time.Second, 4, WithGrace(time.Hour))
	slow, _ := NewGCRA(c, "sx:", 1, time.Second, 4, WithGrace(time.Hour))

	// Before the key's last change: 4 at t0 fast; the slow rate converts
	// the key (full again) 4ms later; a slow decision at t0 would see
	// room for 2 more at t0.
	if r := allow(fast, "a", t0, 4); !r.OK {
		t.Fatal(r)
	}
	if r := allow(slow, "a", t0+4e6, 1); !r.OK {
		t.Fatal(r)
	}
	if r := allow(slow, "a", t0, 1); r.OK || r.RetryAfter != 4*time.Millisecond {
		t.Fatalf("a slow decision before the change: %+v, want a denial until it", r)
	}
	if r := allow(slow, "a", t0+4e6, 3); !r.OK {
		t.Fatalf("at the change: %+v", r)
	}

	// Another rate before the key's latest write: 1 at t0+100s slow; a
	// fast decision at t0+98.5s would convert 2.5 events owed (3) and
	// admit 1, leaving the key full by t0+100s, where 4 more would fit.
	if r := allow(slow, "b", t0+100*s, 1); !r.OK {
		t.Fatal(r)
	}
	if r := allow(fast, "b", t0+98*s+s/2, 1); r.OK || r.RetryAfter != 1500*time.Millisecond {
		t.Fatalf("a fast decision before the key's latest write: %+v, want a denial until it", r)
	}
	if r := allow(fast, "b", t0+100*s, 4); r.OK {
		t.Fatalf("1 admitted slow at t0+100s, then 4 fast at the same time: %+v", r)
	}
	if r := allow(fast, "b", t0+100*s, 3); !r.OK {
		t.Fatalf("3 fast after 1 slow at one time: %+v", r)
	}
}

// TestGCRAChangeFar: a key written at one rate, read at another more than
// 2^22 s (the scripts' "far") ahead, is full; read as far behind, it is
// denied until its latest write.
func TestGCRAChangeFar(t *testing.T) {
	_, c := server(t)
	a, _ := NewGCRA(c, "sf:", 10, time.Second, 3, WithGrace(time.Hour))
	b, _ := NewGCRA(c, "sf:", 3, time.Second, 3, WithGrace(time.Hour))
	t0 := time.Now().UnixNano()
	if r, err := a.allowNAt(bg, "k", t0, 3); err != nil || !r.OK {
		t.Fatal(r, err)
	}
	if r, err := b.allowNAt(bg, "k", t0-1e16, 1); err != nil || r.OK || r.RetryAfter != time.Duration(1e16) {
		t.Fatalf("far behind at another rate: %+v %v", r, err)
	}
	if r, err := b.allowNAt(bg, "k", t0+1e16, 3); err != nil || !r.OK {
		t.Fatalf("far ahead at another rate: %+v %v", r, err)
	}
	// The exact wait is a third of a second rounded up to the ns; the
	// key's grid of steps, from its origin, may round it 1ns further up.
	if r, err := b.allowNAt(bg, "k", t0+1e16, 1); err != nil || r.OK || r.RetryAfter < time.Second/3+1 || r.RetryAfter > time.Second/3+2 {
		t.Fatalf("then at 3/s: %+v %v", r, err)
	}
}

// TestGCRALegacyKey: a key of 24 bytes (origin and TAT only, as keys were
// before they carried their rate) is read as the reader's rate, decision
// for decision as package gcra's Step on its TAT.
func TestGCRALegacyKey(t *testing.T) {
	_, c := server(t)
	l, _ := NewGCRA(c, "sl:", 7, time.Second, 4, WithGrace(time.Hour))
	ref, _ := newGoGCRA(7, time.Second, 4)
	now := time.Now().UnixNano()
	if _, err := l.allowNAt(bg, "k", now, 3); err != nil {
		t.Fatal(err)
	}
	st := rawState(t, c, l.keyOf("k"), 8)
	gp := l.prog.Load().gp
	tat, ok := gp.gcraTAT(int64(st[0]), int64(st[1]), int64(st[2]))
	if !ok {
		t.Fatal(st)
	}
	raw := make([]byte, 24)
	for i, f := range st[:3] {
		binary.LittleEndian.PutUint64(raw[8*i:], math.Float64bits(f))
	}
	if err := c.Set(bg, l.keyOf("k"), raw, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	for i, at := range []int64{now, now + 1e8, now + 2e8} {
		next, want, _ := stepGoGCRA(ref, tat, at, 1)
		got, err := l.allowNAt(bg, "k", at, 1)
		if err != nil || got != want {
			t.Fatalf("decision %d on a 24-byte key: %+v %v, gcra.Step %+v", i, got, err, want)
		}
		tat = next
	}
}
