package atomic128

import (
	"sync/atomic"
	"unsafe"

	"github.com/cellrate/cellrate/internal/race"
)

// LoadAligned atomically loads and returns the pair at p, which must be
// 16-byte aligned.
//
// LoadAligned and CompareAndSwapAligned are Uint64Pair's Load and
// CompareAndSwap on a pair the caller lays out itself: an element of a
// plain, pointer-free array of [2]uint64 (a table of millions of pairs that
// the garbage collector never scans, and whose pairs pack four to a cache
// line, where a []Uint64Pair takes 24 bytes a pair). They run the same
// instructions on the same path (Path), with the same ordering and the same
// race-detector annotations.
//
// The caller must align the pair to 16 bytes, and must access it only
// through these functions for as long as any goroutine may; a misaligned
// pair panics with an index out of range (a 16-byte atomic on it would
// fault or tear).
func LoadAligned(p *[2]uint64) (v1, v2 uint64) {
	_ = aligned[uintptr(unsafe.Pointer(p))&15]
	if race.Enabled {
		return loadAlignedRace(p)
	}
	return load(p)
}

// CompareAndSwapAligned executes the compare-and-swap operation for the
// pair at p, which must be 16-byte aligned: if it holds old1, old2 it
// stores new1, new2 and reports true; otherwise it leaves it unchanged and
// reports false.
// The pair's rules are LoadAligned's.
func CompareAndSwapAligned(p *[2]uint64, old1, old2, new1, new2 uint64) (swapped bool) {
	_ = aligned[uintptr(unsafe.Pointer(p))&15]
	if race.Enabled {
		return casAlignedRace(p, old1, old2, new1, new2)
	}
	return cas(p, old1, old2, new1, new2)
}

// LoadFirstAligned atomically loads the first word of the pair at p, which
// must be 16-byte aligned: the value that word held at some instant (every
// path writes each word of a pair single-copy atomically), not necessarily
// with the second word of that instant. It is a filter before
// LoadAligned, for a caller scanning many pairs for one first word: a plain
// 64-bit atomic load. It orders nothing, as far as the race detector
// knows: read the pair with LoadAligned before using anything it
// publishes.
func LoadFirstAligned(p *[2]uint64) uint64 {
	return atomic.LoadUint64(&p[0])
}

// aligned is indexed by a pair's address modulo 16: a misaligned pair
// panics with an index out of range, a check cheap enough for the
// functions above to inline (a call to a panicking function is not).
var aligned [1]struct{}

// The functions with their race annotations (as the methods' in pair.go).

func loadAlignedRace(p *[2]uint64) (v1, v2 uint64) {
	v1, v2 = load(p)
	raceAcquire(p)
	return v1, v2
}

func casAlignedRace(p *[2]uint64, old1, old2, new1, new2 uint64) (swapped bool) {
	raceReleaseMerge(p)
	swapped = cas(p, old1, old2, new1, new2)
	raceAcquire(p)
	return swapped
}
