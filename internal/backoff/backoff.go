// Package backoff spaces out the retries of a compare-and-swap loop that
// lost a race.
//
// Without it, two cores admitting on one limiter pass its cache line back
// and forth on every call, each paying a transfer (gcra's BenchmarkParallel
// admitting took 3.6x its single-goroutine time on a 2-core Xeon VM; with
// it, 1.4x).
// A loser that waits a few hundred nanoseconds before retrying lets the
// winner make its next calls on a line it already owns, as a contended
// mutex does by parking the loser, and the throughput of both returns to
// about that of one (BenchmarkIncrement).
//
// Contract: a Spin's zero value is ready, local to one call; Wait never
// blocks, never yields the P and executes at most Max spin-wait hints
// (PAUSE on amd64, YIELD on arm64, nothing elsewhere), so a retry loop using
// it stays lock-free: a caller only waits after another caller's
// compare-and-swap succeeded.
package backoff

import (
	_ "unsafe" // for go:linkname
)

// First and Max bound the hints one Wait executes: First after the first
// lost race, doubling to Max. First is near the runtime's own spin
// (procyield(30) in sync.Mutex's spinning); on the measured machine a PAUSE
// takes 14 ns, so a first wait is about 450 ns.
const (
	First = 32
	Max   = 256
)

// procyield executes cycles spin-wait hints. The runtime keeps it linkable
// (go.dev/issue/67401).
//
//go:linkname procyield runtime.procyield
func procyield(cycles uint32)

// Spin is the backoff state of one retry loop.
type Spin struct{ n uint32 }

// Wait spins First hints after the first lost race, then twice as many as
// the last Wait, up to Max.
func (s *Spin) Wait() {
	s.n = min(max(2*s.n, First), Max)
	procyield(s.n)
}
