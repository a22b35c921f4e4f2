// Package atomic128 provides Uint64Pair, a 128-bit cell holding two uint64
// values that are loaded, stored, swapped and compared-and-swapped as one.
//
// The API follows the accepted proposal golang/go#61236 (sync/atomic.Uint64Pair),
// so callers can move to the standard library type when it ships.
//
// Ordering: every operation is sequentially consistent, as the operations of
// sync/atomic are. A successful CompareAndSwap, Store or Swap happens before
// any Load, CompareAndSwap or Swap that observes the pair it wrote.
//
// The zero value is a pair of zeros, ready to use. A Uint64Pair must not be
// copied after first use (go vet reports copies).
package atomic128
