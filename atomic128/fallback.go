package atomic128

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/cellrate/cellrate/asm"
	"golang.org/x/sys/cpu"
)

// The fallback serves every target without 128-bit instructions (and amd64
// CPUs without CX16, and the purego tag). Pair addresses hash to a table of
// seqlocks, each on its own cache line: a writer makes its stripe's sequence
// odd, writes, and makes it even again; a reader retries until it sees the
// same even sequence before and after reading, so Load writes nothing and
// readers do not contend with each other. The data words are read and
// written with 64-bit sync/atomic operations (a seqlock reader races with
// writers by design; the memory model allows that only for atomics), which
// is why Uint64Pair is 8-byte aligned on 32-bit targets too.

// seqStripes is the number of seqlocks; a power of two so the hash is a mask.
const seqStripes = 64

// spinsBeforeYield bounds busy-waiting on a stripe whose writer may have been
// descheduled.
const spinsBeforeYield = 64

type seqStripe struct {
	seq atomic.Uint64
	_   cpu.CacheLinePad
}

var seqlocks [seqStripes]seqStripe

func seqFor(p *[2]uint64) *atomic.Uint64 {
	a := uintptr(unsafe.Pointer(p)) >> 3
	return &seqlocks[(a^a>>6^a>>12)&(seqStripes-1)].seq
}

// waitHook, when a test sets it, runs at the start of every wait (after an
// attempt found its stripe locked or changed) with the number of waits
// before it. It is read only on that slow path, never by an attempt that
// succeeds.
var waitHook func(spins int)

// wait is the pause after the failed attempt number spins (from 0) of one
// operation: a spin, and from spinsBeforeYield on a yield.
func wait(spins int) {
	if waitHook != nil {
		waitHook(spins)
	}
	if spins >= spinsBeforeYield {
		runtime.Gosched()
	}
}

// lockWrite makes the stripe's sequence odd and returns the odd value.
func lockWrite(seq *atomic.Uint64) uint64 {
	for spins := 0; ; spins++ {
		s := seq.Load()
		if s&1 == 0 && seq.CompareAndSwap(s, s+1) {
			return s + 1
		}
		wait(spins)
	}
}

func fallbackLoad(p *[2]uint64) (v1, v2 uint64) {
	seq := seqFor(p)
	for spins := 0; ; spins++ {
		if v1, v2, ok := readTry(seq, seq.Load(), p); ok {
			return v1, v2
		}
		wait(spins)
	}
}

// readTry is one attempt of a seqlock read: s is the sequence read before
// it. The pair it loads is valid only if s is even (no writer held the
// stripe) and the sequence still equals s after the loads (no writer took
// it meanwhile). It inlines into fallbackLoad; tests call it with a
// sequence read before a write, which no timing can arrange every time.
func readTry(seq *atomic.Uint64, s uint64, p *[2]uint64) (v1, v2 uint64, ok bool) {
	if s&1 != 0 {
		return 0, 0, false
	}
	v1 = atomic.LoadUint64(&p[0])
	v2 = atomic.LoadUint64(&p[1])
	return v1, v2, seq.Load() == s
}

// beginWrite locks p's stripe for writing and returns a copy of the pair
// for a reference operation to run on.
func beginWrite(p *[2]uint64) (seq *atomic.Uint64, odd uint64, tmp [2]uint64) {
	seq = seqFor(p)
	odd = lockWrite(seq)
	return seq, odd, [2]uint64{atomic.LoadUint64(&p[0]), atomic.LoadUint64(&p[1])}
}

// endWrite stores tmp into p and unlocks the stripe. The words are written
// atomically because readers load them concurrently.
func endWrite(p *[2]uint64, seq *atomic.Uint64, odd uint64, tmp *[2]uint64) {
	atomic.StoreUint64(&p[0], tmp[0])
	atomic.StoreUint64(&p[1], tmp[1])
	seq.Store(odd + 1)
}

func fallbackStore(p *[2]uint64, v1, v2 uint64) {
	seq, odd, tmp := beginWrite(p)
	asm.RefStore(&tmp, v1, v2)
	endWrite(p, seq, odd, &tmp)
}

func fallbackSwap(p *[2]uint64, new1, new2 uint64) (old1, old2 uint64) {
	seq, odd, tmp := beginWrite(p)
	old1, old2 = asm.RefSwap(&tmp, new1, new2)
	endWrite(p, seq, odd, &tmp)
	return old1, old2
}

func fallbackCas(p *[2]uint64, old1, old2, new1, new2 uint64) bool {
	seq, odd, tmp := beginWrite(p)
	if !asm.RefCas(&tmp, old1, old2, new1, new2) {
		// Nothing written: restoring the even sequence lets readers that
		// overlapped the lock keep what they read.
		seq.Store(odd - 1)
		return false
	}
	endWrite(p, seq, odd, &tmp)
	return true
}
