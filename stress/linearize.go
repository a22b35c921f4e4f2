package stress

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/cellrate/cellrate/limit"
)

type pairOp uint8

const (
	opLoad pairOp = iota
	opStore
	opSwap
	opCAS
)

// pairInput is one call on a Pair: for opStore and opSwap the new pair is
// (a, b); for opCAS the old pair is (a, b) and the new one (c, d).
type pairInput struct {
	op         pairOp
	a, b, c, d uint64
}

// pairOutput is what the call returned: the pair for opLoad and opSwap,
// the success flag for opCAS.
type pairOutput struct {
	a, b uint64
	ok   bool
}

// PairModel is the sequential specification of a Pair for porcupine: one
// 128-bit register with load, store, swap and compare-and-swap.
var PairModel = porcupine.Model{
	Init: func() any { return [2]uint64{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.([2]uint64), input.(pairInput), output.(pairOutput)
		switch in.op {
		case opLoad:
			return out.a == s[0] && out.b == s[1], s
		case opStore:
			return true, [2]uint64{in.a, in.b}
		case opSwap:
			return out.a == s[0] && out.b == s[1], [2]uint64{in.a, in.b}
		default:
			match := s[0] == in.a && s[1] == in.b
			if out.ok != match {
				return false, s
			}
			if match {
				s = [2]uint64{in.c, in.d}
			}
			return true, s
		}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(pairInput), output.(pairOutput)
		switch in.op {
		case opLoad:
			return fmt.Sprintf("Load() = (%d,%d)", out.a, out.b)
		case opStore:
			return fmt.Sprintf("Store(%d,%d)", in.a, in.b)
		case opSwap:
			return fmt.Sprintf("Swap(%d,%d) = (%d,%d)", in.a, in.b, out.a, out.b)
		default:
			return fmt.Sprintf("CAS(%d,%d -> %d,%d) = %v", in.a, in.b, in.c, in.d, out.ok)
		}
	},
}

// RecordPair runs clients goroutines doing ops random operations each on p,
// from the pair (0, 0), and returns the history. Values come from {0, 1, 2}
// so that compare-and-swaps succeed often and histories stay checkable; a
// CAS expects the pair its client last saw.
func RecordPair(p Pair, clients, ops int, seed uint64) []porcupine.Operation {
	p.Store(0, 0)
	return record(clients, seed, func(c int, r *rand.Rand, stamp func() int64) []porcupine.Operation {
		var seen [2]uint64
		hist := make([]porcupine.Operation, 0, ops)
		for range ops {
			in := pairInput{op: pairOp(r.IntN(4)), a: r.Uint64N(3), b: r.Uint64N(3), c: r.Uint64N(3), d: r.Uint64N(3)}
			if in.op == opCAS && r.IntN(4) != 0 {
				in.a, in.b = seen[0], seen[1]
			}
			var out pairOutput
			call := stamp()
			switch in.op {
			case opLoad:
				out.a, out.b = p.Load()
				seen = [2]uint64{out.a, out.b}
			case opStore:
				p.Store(in.a, in.b)
			case opSwap:
				out.a, out.b = p.Swap(in.a, in.b)
				seen = [2]uint64{out.a, out.b}
			case opCAS:
				out.ok = p.CompareAndSwap(in.a, in.b, in.c, in.d)
			}
			hist = append(hist, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: stamp()})
			if r.IntN(3) == 0 {
				runtime.Gosched()
			}
		}
		return hist
	})
}

// record runs client on clients goroutines released together, each with
// its index, its own generator and stamp, which returns ticks of one
// shared counter: taken right before and right after each call, they order
// every two operations that did not overlap. It returns all the histories.
func record(clients int, seed uint64, client func(c int, r *rand.Rand, stamp func() int64) []porcupine.Operation) []porcupine.Operation {
	var (
		tick  atomic.Int64
		wg    sync.WaitGroup
		start sync.WaitGroup
	)
	hist := make([][]porcupine.Operation, clients)
	start.Add(1)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(c)))
			start.Wait()
			hist[c] = client(c, r, func() int64 { return tick.Add(1) })
		}()
	}
	start.Done()
	wg.Wait()
	return slices.Concat(hist...)
}

// Linearizable records histories of rounds on the cells, one cell per round
// in turn, until d has passed, and checks each against PairModel. It
// returns the number of rounds checked, and on the first history that is
// not linearizable (or could not be decided within a minute) an error and
// that history.
func Linearizable(cells []Pair, d time.Duration, clients, ops int, seed uint64) (int, []porcupine.Operation, error) {
	stop := Pressure()
	defer stop()
	deadline := time.Now().Add(d)
	rounds := 0
	for ; rounds == 0 || time.Now().Before(deadline); rounds++ {
		h := RecordPair(cells[rounds%len(cells)], clients, ops, seed+uint64(rounds))
		if err := check(PairModel, h, rounds); err != nil {
			return rounds + 1, h, err
		}
	}
	return rounds, nil, nil
}

// Describe renders a history, one operation per line, in call order.
func Describe(m porcupine.Model, h []porcupine.Operation) string {
	s := ""
	for _, op := range sortedByCall(h) {
		s += fmt.Sprintf("  client %d [%4d,%4d] %s\n", op.ClientId, op.Call, op.Return, m.DescribeOperation(op.Input, op.Output))
	}
	return s
}

func sortedByCall(h []porcupine.Operation) []porcupine.Operation {
	out := slices.Clone(h)
	slices.SortFunc(out, func(x, y porcupine.Operation) int { return cmp.Compare(x.Call, y.Call) })
	return out
}

// A Step is a limiter's pure step function over a comparable state.
type Step func(state any, now, n int64) (next any, res limit.Result, err error)

type limiterInput struct{ now, n int64 }

type limiterOutput struct {
	res limit.Result
	err error
}

// LimiterModel is the sequential specification of a limiter for porcupine:
// its own step function from the state a fresh limiter starts in, where a
// denial writes nothing (the cellrate convention). A cell is
// linearizable when every concurrent history of its decisions could have
// come from running step one decision at a time.
func LimiterModel(init any, step Step) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return init },
		Step: func(state, input, output any) (bool, any) {
			in, out := input.(limiterInput), output.(limiterOutput)
			next, res, err := step(state, in.now, in.n)
			if !res.OK {
				next = state
			}
			return res == out.res && errors.Is(err, out.err) && errors.Is(out.err, err), next
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(limiterInput), output.(limiterOutput)
			return fmt.Sprintf("AllowNAt(%d, %d) = %+v, %v", in.now, in.n, out.res, out.err)
		},
	}
}

// RecordLimiter runs clients goroutines making ops decisions each on lim,
// with times drawn from [0, span) (so out of order across clients) and
// costs from [0, maxN], and returns the history.
func RecordLimiter(lim limit.Limiter, clients, ops int, span, maxN int64, seed uint64) []porcupine.Operation {
	return record(clients, seed, func(c int, r *rand.Rand, stamp func() int64) []porcupine.Operation {
		hist := make([]porcupine.Operation, 0, ops)
		for range ops {
			in := limiterInput{now: r.Int64N(span), n: 1}
			if r.IntN(4) == 0 {
				in.n = r.Int64N(maxN + 1)
			}
			call := stamp()
			res, err := lim.AllowNAt(in.now, in.n)
			hist = append(hist, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: limiterOutput{res, err}, Return: stamp()})
			if r.IntN(3) == 0 {
				runtime.Gosched()
			}
		}
		return hist
	})
}

// LimiterLinearizable records rounds of RecordLimiter on fresh limiters
// until d has passed and checks each against model, like Linearizable.
func LimiterLinearizable(newLim func() limit.Limiter, model porcupine.Model, d time.Duration, clients, ops int, span, maxN int64, seed uint64) (int, []porcupine.Operation, error) {
	stop := Pressure()
	defer stop()
	deadline := time.Now().Add(d)
	rounds := 0
	for ; rounds == 0 || time.Now().Before(deadline); rounds++ {
		h := RecordLimiter(newLim(), clients, ops, span, maxN, seed+uint64(rounds))
		if err := check(model, h, rounds); err != nil {
			return rounds + 1, h, err
		}
	}
	return rounds, nil, nil
}

func check(model porcupine.Model, h []porcupine.Operation, round int) error {
	switch porcupine.CheckOperationsTimeout(model, h, time.Minute) {
	case porcupine.Illegal:
		return fmt.Errorf("linearizability: round %d: history of %d operations is not linearizable", round, len(h))
	case porcupine.Unknown:
		return fmt.Errorf("linearizability: round %d: checker timed out", round)
	}
	return nil
}
