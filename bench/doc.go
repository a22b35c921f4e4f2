// Package bench compares cellrate's types with the peers people reach for:
// golang.org/x/time/rate, go.uber.org/ratelimit, github.com/juju/ratelimit,
// github.com/throttled/throttled/v2 (GCRA), github.com/puzpuzpuz/xsync/v4
// counters, sync/atomic and a mutex token bucket; and, for per-key limiters
// (package keyed), a sync.Map and a mutex map of x/time/rate limiters,
// github.com/sethvargo/go-limiter's memorystore, github.com/go-chi/httprate's
// local counter, github.com/ulule/limiter/v3's memory store and seed 003's
// HoldUp design (keyed_peers.go).
//
// It is its own module so that none of the peers becomes a dependency of
// github.com/cellrate/cellrate. The implementations and the cases the
// report measures are here (LimiterCase, KeyedCase, HTTPCase); package
// paired measures them in pairs and estimates each comparison with its
// interval; cmd/report runs every comparison, the accuracy schedules
// (accuracy.go) and the runs over real connections (http.go), and writes
// report/. The go test benchmarks (bench_test.go and beside it) drive the
// same implementations for benchstat.
package bench
