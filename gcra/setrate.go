package gcra

import (
	"math"
	"runtime"

	"github.com/cellrate/cellrate/internal/gcrastep"
	"github.com/cellrate/cellrate/limit"
)

// A generation's TAT is retired once a SetRate has taken it: a TAT that
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
		g = l.move(g)
	}
}

// move returns the generation to look at after g, whose TAT is retired:
// the current one, or g's successor once g's retirement is finished.
func (l *Limiter) move(g *gen) *gen {
	if c := l.cur.Load(); c != nil && c != g {
		return c
	}
	return l.finish(g)
}

// finish completes the retirement of g, whose TAT is retired, and returns
// its successor. Any goroutine may run it: all carry the same TAT over,
// and only the first write of it, and of the current generation, lands.
func (l *Limiter) finish(g *gen) *gen {
	nx := g.next.Load()
	nx.tat.CompareAndSwap(pending, uint64(g.ps.Convert(gcrastep.State(g.from.Load()), g.at, &nx.ps, maxTAT)))
	if g == &l.gen {
		l.cur.CompareAndSwap(nil, nx)
	} else {
		l.cur.CompareAndSwap(g, nx)
	}
	return nx
}

// step is Params.Step that refuses an admission whose TAT would pass
// maxTAT, as at the end of time.
func (g *gen) step(s gcrastep.State, now, n int64) (gcrastep.State, limit.Result, error) {
	next, r, err := g.ps.Step(s, now, n)
	if r.OK && uint64(next) > maxTAT {
		return s, limit.Result{RetryAfter: limit.Never, Remaining: g.ps.RemainingAt(s, now)}, nil
	}
	return next, r, err
}

// undo gives back an admission from generation id that moved its TAT from
// before to after (see Params.Undo), and reports whether it did.
func (l *Limiter) undo(id uint64, before, after gcrastep.State) bool {
	for {
		g, tat := l.live()
		if g.id != id {
			return false
		}
		next, ok := g.ps.Undo(gcrastep.State(tat), before, after)
		if !ok {
			return false
		}
		if g.tat.CompareAndSwap(tat, uint64(next)) {
			return true
		}
	}
}

// SetRate is SetRateAt with the Limiter's clock.
func (l *Limiter) SetRate(rate float64) error { return l.SetRateAt(l.now(), rate) }

// SetRateAt makes rate events per second the limiter's rate from now on,
// keeping its burst, atomically with respect to every other method: the
// events owed at now (what the old rate had not refilled yet) carry over
// and are owed at the new rate, rounded against the caller. The rate is
// read as NewRate reads it, with NewRate's errors (the zero Limiter, of
// burst 0, refuses every rate). A SetRateAt may wait for another one in
// progress; decisions never wait for it.
//
// Across changes the bound becomes: the admitted cost whose now values lie
// in a closed interval is at most burst plus the integral, over that
// interval, of the rate in force (each rate from its SetRateAt's now on),
// for decisions whose now is not before the last change made when they
// run. A change whose now is L before a decision already made (a clock
// read before that decision's) counts those L as events owed and converts
// them too: up to L times the new rate more. Reservations made before a
// change keep their time to act (the old rate's schedule) and are outside
// the bound, which counts the events they took as owed at the new rate
// from the change; Refund and Reservation.Cancel give nothing back across
// a change.
func (l *Limiter) SetRateAt(now int64, rate float64) error {
	g, _ := l.live()
	ps, err := gcrastep.RateParams(rate, g.ps.Burst())
	if err != nil {
		return err
	}
	nx := &gen{ps: ps}
	nx.tat.Store(pending)
	for {
		g, _ := l.live()
		nx.id = g.id + 1
		if !g.next.CompareAndSwap(nil, nx) {
			runtime.Gosched() // another SetRate is retiring g
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
