package window

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/limittest"
	"github.com/cellrate/cellrate/internal/race"
	"github.com/cellrate/cellrate/limit"
)

// refCounter is the reference model: the same windows and rotation rules,
// written with big integers and exact rationals, with no shortcut taken.
type refCounter struct {
	l, w      *big.Int // limit and window length
	start     *big.Int
	prev, cur *big.Int
}

func newRef(l int64, w time.Duration) *refCounter {
	return &refCounter{l: big.NewInt(l), w: big.NewInt(int64(w)), start: new(big.Int), prev: new(big.Int), cur: new(big.Int)}
}

// Where a caller's time falls against the model's windows.
const (
	inCur  = iota // the current window
	inPrev        // the previous one: decided as at its end, counted in it
	before        // before both: nothing admitted
)

// view returns the (start, prev, cur, e) the model sees at now, and where
// now falls.
func (r *refCounter) view(now int64) (start, prev, cur, e *big.Int, at int) {
	t := big.NewInt(now)
	start, prev, cur = new(big.Int).Set(r.start), new(big.Int).Set(r.prev), new(big.Int).Set(r.cur)
	if prev.Sign() == 0 && cur.Sign() == 0 {
		return t, prev, cur, new(big.Int), inCur
	}
	e = new(big.Int).Sub(t, start)
	if e.Sign() < 0 {
		if new(big.Int).Neg(e).Cmp(r.w) <= 0 {
			return start, prev, cur, new(big.Int), inPrev
		}
		return start, prev, cur, new(big.Int), before
	}
	if e.Cmp(r.w) < 0 {
		return start, prev, cur, e, inCur
	}
	twoW := new(big.Int).Lsh(r.w, 1)
	if e.Cmp(twoW) < 0 && cur.Sign() != 0 {
		return start.Add(start, r.w), cur, new(big.Int), e.Sub(e, r.w), inCur
	}
	return t, new(big.Int), new(big.Int), new(big.Int), inCur
}

// estimate returns prev*(W-e)/W + cur exactly.
func (r *refCounter) estimate(prev, cur, e *big.Int) *big.Rat {
	x := new(big.Rat).SetFrac(new(big.Int).Mul(prev, new(big.Int).Sub(r.w, e)), r.w)
	return x.Add(x, new(big.Rat).SetInt(cur))
}

func (r *refCounter) fitsAt(now, n int64) bool {
	_, prev, cur, e, at := r.view(now)
	if at == before {
		return false
	}
	est := r.estimate(prev, cur, e)
	est.Add(est, new(big.Rat).SetInt64(n))
	return est.Cmp(new(big.Rat).SetInt(r.l)) <= 0
}

func (r *refCounter) remaining(prev, cur, e *big.Int, at int) int64 {
	if at == before {
		return 0
	}
	left := new(big.Rat).Sub(new(big.Rat).SetInt(r.l), r.estimate(prev, cur, e))
	if left.Sign() <= 0 {
		return 0
	}
	return new(big.Int).Quo(left.Num(), left.Denom()).Int64()
}

// step mirrors Params.Step; the wait is found by bisection over the model's
// own decision, which is monotone in time when nothing is admitted: false
// before the previous window, then as at the current window's start, then
// as the estimate falls.
func (r *refCounter) step(now, n int64) limit.Result {
	if n < 0 || big.NewInt(n).Cmp(r.l) > 0 {
		return limit.Result{RetryAfter: limit.Never}
	}
	start, prev, cur, e, at := r.view(now)
	if n == 0 {
		return limit.Result{OK: true, Remaining: r.remaining(prev, cur, e, at)}
	}
	if !r.fitsAt(now, n) {
		lo, hi := now, now
		for step := int64(1); !r.fitsAt(hi, n); step *= 2 {
			lo, hi = hi, hi+step
		}
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			if r.fitsAt(mid, n) {
				hi = mid
			} else {
				lo = mid
			}
		}
		return limit.Result{Remaining: r.remaining(prev, cur, e, at), RetryAfter: time.Duration(hi - now)}
	}
	if at == inPrev {
		prev.Add(prev, big.NewInt(n))
	} else {
		cur.Add(cur, big.NewInt(n))
	}
	r.start, r.prev, r.cur = start, prev, cur
	return limit.Result{OK: true, Remaining: r.remaining(prev, cur, e, at)}
}

func (r *refCounter) state() State {
	return State{Start: r.start.Int64(), Prev: uint32(r.prev.Uint64()), Cur: uint32(r.cur.Uint64())}
}

// schedule draws random parameters and a random time step generator that
// mixes bursts, steady traffic, idle gaps of one and many windows, and time
// going backwards.
type schedule struct {
	rng   *rand.Rand
	limit int64
	win   time.Duration
	now   int64
	back  bool // allow time to go backwards
}

func newSchedule(rng *rand.Rand, back bool) *schedule {
	limits := []int64{1, 2, 3, 10, 100, 1000, 65535, MaxLimit}
	wins := []time.Duration{1, 3, 1000, time.Microsecond * 7, time.Millisecond, time.Second, 24 * time.Hour, 1 << 50}
	s := &schedule{rng: rng, back: back}
	s.limit = limits[rng.IntN(len(limits))]
	if rng.IntN(3) == 0 {
		s.limit = 1 + rng.Int64N(MaxLimit)
	}
	s.win = wins[rng.IntN(len(wins))]
	if rng.IntN(3) == 0 {
		s.win = time.Duration(1 + rng.Int64N(1<<40))
	}
	// Start anywhere the schedule cannot run off the int64 range.
	s.now = rng.Int64N(1<<62) - 1<<61
	return s
}

func (s *schedule) next() (now, n int64) {
	w := int64(s.win)
	switch k := s.rng.IntN(20); {
	case k < 8: // within the window
		s.now += s.rng.Int64N(w/8 + 1)
	case k < 12: // no time passes
	case k < 15: // about a window
		s.now += w - w/4 + s.rng.Int64N(w/2+1)
	case k < 17: // an idle gap of several windows
		s.now += w * (2 + s.rng.Int64N(4))
	case k < 18 && w < 1<<58:
		s.now += w*2 - 1 + s.rng.Int64N(3)
	default:
		if s.back {
			s.now -= s.rng.Int64N(w + 1)
		}
	}
	switch k := s.rng.IntN(16); {
	case k < 10:
		n = 1
	case k < 13:
		n = 1 + s.rng.Int64N(s.limit)
	case k < 14:
		n = 0
	case k < 15:
		n = s.limit
	default:
		n = s.limit + 1 - s.rng.Int64N(4)
	}
	return s.now, n
}

func TestStepMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	runs := 400
	switch {
	case race.Enabled: // pure: see package race
		runs = 6
	case testing.Short():
		runs = 60
	}
	for run := range runs {
		sc := newSchedule(rng, run%2 == 1)
		p, err := NewParams(sc.limit, sc.win)
		if err != nil {
			t.Fatal(err)
		}
		ref := newRef(sc.limit, sc.win)
		var s State
		for i := range 300 {
			now, n := sc.next()
			next, got, err := p.Step(s, now, n)
			if want := limittest.WantErr(n, sc.limit); err != want {
				t.Fatalf("run %d step %d: n %d: error %v, want %v", run, i, n, err, want)
			}
			want := ref.step(now, n)
			if got != want {
				t.Fatalf("run %d step %d (L=%d W=%d, state %+v, now %d, n %d): got %+v, want %+v",
					run, i, sc.limit, sc.win, s, now, n, got, want)
			}
			if got.OK {
				s = next
				if n > 0 && s != ref.state() {
					t.Fatalf("run %d step %d: state %+v, reference %+v", run, i, s, ref.state())
				}
			} else if next != s {
				t.Fatalf("run %d step %d: a denial changed the state", run, i)
			}
			one, r, _ := p.Step(s, now, 1)
			if adm, _, ok := p.take(s, now, 1); ok != ref.fitsAt(now, 1) || ok != r.OK || ok && narrow(adm) != one {
				t.Fatalf("run %d step %d: take disagrees with the reference", run, i)
			}
		}
	}
}
