package striped

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// lineSize is the cache line size padded cells are rounded and aligned to:
// cpu.CacheLinePad's size (64 bytes on amd64 and 386, 128 on arm64), at
// least 8 so that platforms reporting no line size still get aligned int64s.
const lineSize = max(unsafe.Sizeof(cpu.CacheLinePad{}), 8)

// perP maps P ids to slots of type T, one slot a P, each slot on cache
// lines of its own. T's size must be a multiple of lineSize.
//
// The table is append-only: growing publishes, by compare-and-swap, a new
// table that holds every slot of the old one at the same index plus new
// slots after them. A slot is therefore never moved or dropped, and whoever
// loads the table later sees every slot anyone reached through an earlier
// one. The zero perP is an empty table.
type perP[T any] struct {
	t atomic.Pointer[table[T]]
}

type table[T any] struct {
	slots []*T
}

// get returns P pid's slot, or nil if the table has none yet.
func (p *perP[T]) get(pid int) *T {
	if t := p.t.Load(); t != nil && uint(pid) < uint(len(t.slots)) {
		return t.slots[pid]
	}
	return nil
}

// all returns every slot allocated so far. The caller must not modify it.
func (p *perP[T]) all() []*T {
	if t := p.t.Load(); t != nil {
		return t.slots
	}
	return nil
}

// grow makes the table hold a slot for P pid, and for every P that
// GOMAXPROCS currently allows, so that one growth usually covers them all.
func (p *perP[T]) grow(pid int) {
	for {
		old := p.t.Load()
		var have []*T
		if old != nil {
			have = old.slots
		}
		if pid < len(have) {
			return
		}
		want := max(pid+1, runtime.GOMAXPROCS(0))
		slots := make([]*T, want)
		copy(slots, have)
		block := alignedBlock[T](want - len(have))
		for i := range block {
			slots[len(have)+i] = &block[i]
		}
		if p.t.CompareAndSwap(old, &table[T]{slots: slots}) {
			return
		}
	}
}

// alignedBlock returns k zero T's whose first byte starts a cache line. It
// over-allocates by one T (at least lineSize bytes) and slices from the
// first line boundary inside the allocation, so neighbouring heap objects
// never share a line with a slot.
func alignedBlock[T any](k int) []T {
	buf := make([]T, k+1)
	base := unsafe.Pointer(unsafe.SliceData(buf))
	skip := (lineSize - uintptr(base)%lineSize) % lineSize
	return unsafe.Slice((*T)(unsafe.Add(base, skip)), k)
}
