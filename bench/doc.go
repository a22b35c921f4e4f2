// Package bench compares cellrate's types with the peers people reach for:
// golang.org/x/time/rate, go.uber.org/ratelimit, github.com/juju/ratelimit,
// github.com/throttled/throttled/v2 (GCRA), github.com/puzpuzpuz/xsync/v4
// counters, sync/atomic and a mutex token bucket.
//
// It is its own module so that none of the peers becomes a dependency of
// github.com/cellrate/cellrate. The benchmarks are in bench_test.go; the
// accuracy runs in accuracy.go; cmd/report runs both and writes report/.
package bench
