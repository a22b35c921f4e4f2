package gcra

import (
	"math"
	"math/big"
	"runtime"

	"github.com/cellrate/cellrate/limit"
)

// A generation's TAT is retired once a SetParams has taken it: a TAT that
// admits nothing (it always waits, or its next TAT carries), so a decision
// that loads it moves on to the successor. A successor's TAT is pending
// until the retired one is carried over. No live TAT reaches either value:
// the Limiter refuses an admission whose TAT would pass maxTAT (2 steps,
// at most 4 ns, before the end of time).
const (
	retired = math.MaxUint64
	pending = retired - 1
	maxTAT  = retired - 2
)

// load returns the current generation.
func (l *Limiter) load() *gen {
	if g := l.cur.Load(); g != nil {
		return g
	}
	return &l.gen
}

// live returns the live generation and its TAT, finishing any retirement
// in progress.
func (l *Limiter) live() (*gen, uint64) {
	g := l.load()
	for {
		if tat := g.tat.Load(); tat <= maxTAT {
			return g, tat
		}
		g = l.finish(g)
	}
}

// finish completes the retirement of g, whose TAT is retired, and returns
// its successor. Any goroutine may run it: all carry the same TAT over,
// and only the first write of it, and of the current generation, lands.
func (l *Limiter) finish(g *gen) *gen {
	nx := g.next.Load()
	nx.tat.CompareAndSwap(pending, convert(g.from.Load(), g.at, &g.ps, &nx.ps))
	if g == &l.gen {
		l.cur.CompareAndSwap(nil, nx)
	} else {
		l.cur.CompareAndSwap(g, nx)
	}
	return nx
}

// step is Params.Step that refuses an admission whose TAT would pass
// maxTAT, as at the end of time.
func (g *gen) step(s State, now, n int64) (State, limit.Result, error) {
	next, r, err := g.ps.Step(s, now, n)
	if r.OK && uint64(next) > maxTAT {
		return s, limit.Result{RetryAfter: limit.Never, Remaining: g.ps.remainingAt(s, now)}, nil
	}
	return next, r, err
}

// undo gives back an admission from generation id that moved its TAT from
// before to after (see Params.undo), and reports whether it did.
func (l *Limiter) undo(id uint64, before, after State) bool {
	for {
		g, tat := l.live()
		if g.id != id {
			return false
		}
		next, ok := g.ps.undo(State(tat), before, after)
		if !ok {
			return false
		}
		if g.tat.CompareAndSwap(tat, uint64(next)) {
			return true
		}
	}
}

// SetParams is SetParamsAt with the Limiter's clock.
func (l *Limiter) SetParams(ps Params) error { return l.SetParamsAt(l.now(), ps) }

// SetParamsAt makes ps the limiter's rate and burst from now on,
// atomically with respect to every other method: the events owed at now
// (what the old rate had not yet refilled) carry over, and are owed at the
// new rate; a burst change adds or removes room as bucket's does (a full
// limiter stays full of the old burst's events, up to the new burst). The
// conversion rounds against the caller. The zero Params is a
// *limit.ParamError. A SetParams may wait for another one in progress;
// decisions never wait for it.
//
// Across changes the bound becomes: the admitted cost whose now values lie
// in a closed interval is at most burst plus, over that interval, the
// integral of the rate in force (each rate from its SetParams' now on),
// the burst being the largest in force over it, for decisions whose now is
// not before the last change made when they run. Reservations made before
// a change keep their time to act (the old rate's schedule); Refund and
// Reservation.Cancel give nothing back across a change.
func (l *Limiter) SetParamsAt(now int64, ps Params) error {
	if ps.j == 0 {
		return paramErr("params", ps, nil, nil, "the zero Params: make them with NewParams")
	}
	nx := &gen{ps: ps}
	nx.tat.Store(pending)
	for {
		g, _ := l.live()
		nx.id = g.id + 1
		if !g.next.CompareAndSwap(nil, nx) {
			runtime.Gosched() // another SetParams is retiring g
			continue
		}
		g.at = now // read only after g's TAT is retired, which follows
		for {
			x := g.tat.Load()
			g.from.Store(x)
			if g.tat.CompareAndSwap(x, retired) {
				break
			}
		}
		l.finish(g)
		return nil
	}
}

// RateParams returns the Params of NewRate's limiter (see NewRate): for a
// SetParams to a rate given as a float.
func RateParams(rate float64, burst int64) (Params, error) { return rateParams(rate, burst) }

// convert carries TAT x of Params from over to Params to at now: the
// events owed at now (the lead of x over now, in from's intervals), plus
// what a larger burst adds, are owed from now on in to's intervals; a TAT
// not ahead of now is kept as a time when the burst does not grow, so a
// stale now finds the same TAT. The result is rounded up to a step of to,
// and capped at maxTAT.
func convert(x uint64, now int64, from, to *Params) uint64 {
	if from.j == 0 {
		return 0 // the zero Limiter's first Params: it starts full
	}
	u := new(big.Rat).SetInt(new(big.Int).SetUint64(uint64(now) ^ signBit)) // now in ns
	ns := func(steps uint64, ps *Params) *big.Rat {                         // steps*p/e ns
		return new(big.Rat).SetFrac(new(big.Int).Mul(new(big.Int).SetUint64(steps), new(big.Int).SetUint64(ps.p)),
			new(big.Int).SetUint64(ps.e))
	}
	t1, t2 := ns(from.j, from), ns(to.j, to) // the emission intervals
	lead := new(big.Rat).Sub(ns(x, from), u)
	grow := new(big.Rat).SetInt64(int64(to.burst) - int64(from.burst))
	var tat *big.Rat
	switch {
	case lead.Sign() > 0:
		// events owed: lead/t1 + grow, at to's interval, from now
		d := new(big.Rat).Add(new(big.Rat).Quo(lead, t1), grow)
		if d.Sign() < 0 {
			d.SetInt64(0)
		}
		tat = new(big.Rat).Add(u, d.Mul(d, t2))
	case grow.Sign() > 0:
		tat = new(big.Rat).Add(u, grow.Mul(grow, t2))
	default:
		tat = ns(x, from)
	}
	// In steps of to: tat*e/p, rounded up.
	q := new(big.Rat).Mul(tat, new(big.Rat).SetFrac(new(big.Int).SetUint64(to.e), new(big.Int).SetUint64(to.p)))
	n, r := new(big.Int).QuoRem(q.Num(), q.Denom(), new(big.Int))
	if r.Sign() != 0 {
		n.Add(n, big.NewInt(1))
	}
	if !n.IsUint64() || n.Uint64() > maxTAT {
		return maxTAT
	}
	return n.Uint64()
}
