package paired

import (
	"errors"
	"math"
	"runtime"
	"sync"
	"time"
)

// A Case is one side of a comparison.
type Case struct {
	Name string
	// New returns one goroutine's loop, which runs n operations; it is
	// called once per goroutine before any timing.
	New func() func(n int)
}

// Config sizes a measurement.
type Config struct {
	// Rounds is the number of rounds (at least 6 for a 95% interval).
	Rounds int
	// Turn is the wall time one side's turn aims at.
	Turn time.Duration
	// G is the number of goroutines running the operation at once: 1 runs
	// it on the calling goroutine, locked to its thread, and times the
	// thread's CPU time; more run it on G goroutines and time the
	// process's.
	G int
}

// A Sample is what Measure measured of one side: per round, ns per
// operation by CPU time (CPU; nil where the system has no CPU clock) and
// by the wall clock, and the heap allocations per operation of a turn on
// one goroutine.
type Sample struct {
	Name        string
	CPU, Wall   []float64
	AllocsPerOp float64
}

// NsPerOp returns the per-round figures Measure prefers: CPU time where
// there is a CPU clock, else wall time.
func (s Sample) NsPerOp() []float64 {
	if s.CPU != nil {
		return s.CPU
	}
	return s.Wall
}

// Measure runs a and b in cfg.Rounds rounds, a then b in even rounds and
// b then a in odd ones, each turn of about cfg.Turn, after sizing the
// turns and warming both up.
func Measure(a, b Case, cfg Config) (Sample, Sample, error) {
	if cfg.Rounds < 1 || cfg.G < 1 || cfg.Turn <= 0 {
		return Sample{}, Sample{}, errors.New("paired: Rounds, G and Turn must be positive")
	}
	sides := [2]*side{newSide(a, cfg.G), newSide(b, cfg.G)}
	for _, s := range sides {
		s.size(cfg.Turn)
		s.sample.AllocsPerOp = s.allocs()
	}
	_, hasCPU := cpuNow(true)
	for r := range cfg.Rounds {
		for i := range 2 {
			s := sides[(r+i)%2]
			cpu, wall := s.turn()
			if hasCPU {
				s.sample.CPU = append(s.sample.CPU, cpu)
			}
			s.sample.Wall = append(s.sample.Wall, wall)
		}
	}
	return sides[0].sample, sides[1].sample, nil
}

// side is one Case being measured: its goroutines' loops and the
// operations a turn runs on each.
type side struct {
	loops  []func(n int)
	n      int
	sample Sample
}

func newSide(c Case, g int) *side {
	s := &side{n: 1, sample: Sample{Name: c.Name}}
	for range g {
		s.loops = append(s.loops, c.New())
	}
	return s
}

// minOps is the fewest operations per goroutine a turn runs: on a loaded
// host, waking the goroutines of a parallel turn can take a millisecond,
// and a turn sized on such a stall would be a few operations long, its
// cost per operation mostly the start of the turn.
const minOps = 2000

// size grows the operations per goroutine until a turn takes a quarter of
// want and runs at least minOps, then scales them to want, and checks
// that scale once on a second turn (a stall in the first makes it short).
func (s *side) size(want time.Duration) {
	s.n = 1
	for {
		el := s.timed()
		if (el >= want/4 && s.n >= minOps) || s.n >= math.MaxInt/2 {
			break
		}
		s.n *= 2
	}
	for range 2 {
		el := s.timed()
		s.n = max(minOps, int(float64(s.n)*float64(want)/float64(max(el, 1))))
	}
}

// timed runs one turn and returns its wall time.
func (s *side) timed() time.Duration {
	start := time.Now()
	s.run()
	return time.Since(start)
}

// allocs returns the heap allocations per operation of one goroutine's
// loop running a turn.
func (s *side) allocs() float64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s.loops[0](s.n)
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(s.n)
}

// turn runs one turn and returns its CPU and wall ns per operation.
func (s *side) turn() (cpu, wall float64) {
	ops := float64(s.n * len(s.loops))
	if len(s.loops) == 1 {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c0, _ := cpuNow(true)
		w0 := time.Now()
		s.loops[0](s.n)
		w := time.Since(w0)
		c1, _ := cpuNow(true)
		return float64(c1-c0) / ops, float64(w) / ops
	}
	c0, _ := cpuNow(false)
	w0 := time.Now()
	s.run()
	w := time.Since(w0)
	c1, _ := cpuNow(false)
	// Wall per operation over all goroutines: the throughput's inverse.
	return float64(c1-c0) / ops, float64(w) / ops
}

// run runs every goroutine's loop for s.n operations, at once.
func (s *side) run() {
	if len(s.loops) == 1 {
		s.loops[0](s.n)
		return
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, l := range s.loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			l(s.n)
		}()
	}
	close(start)
	wg.Wait()
}
