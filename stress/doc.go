// Package stress holds the long concurrent runs that prove cellrate's cells
// and limiters: invariant runs over every 128-bit CAS path the CPU supports,
// linearizability checks of recorded histories with porcupine, and a driver
// that hammers any limit.Limiter with random costs and injected clocks and
// checks every admission against an exact rational reference.
//
// The package is its own module so that porcupine never becomes a
// dependency of github.com/cellrate/cellrate. The tests are the product:
//
//	go test -short -race ./...              # CI size, seconds
//	go test -race ./... -stress.dur=30s     # long size (make stress)
//
// The run length per test is -stress.dur, or the STRESS_DUR environment
// variable (a time.ParseDuration string) when the flag is not given.
// -stress.broken swaps a deliberately non-atomic cell into every atomic128
// run, which must then fail.
package stress
