package striped

import (
	"sync/atomic"
	"unsafe"

	"github.com/cellrate/cellrate/internal/race"
)

// Counter is an int64 sum split into one cell a P, each cell on its own
// cache line, so that concurrent Adds on different Ps never write the same
// line. Add costs no atomic read-modify-write on 64-bit platforms (except
// under the race detector); Load reads every cell.
//
// The zero value is a counter at 0, ready to use; its cells are allocated by
// the first Add. A Counter must not be copied after first use.
//
// # GOMAXPROCS changes
//
// A cell is found by the P id, which is below GOMAXPROCS. An Add whose P id
// has no cell yet (GOMAXPROCS grew, or the runtime raised it on a container
// limit change) grows the cell table first. Growth is append-only: it
// publishes, by compare-and-swap, a table in which old cells keep their index
// and new ones follow, so old cells stay in every later table. No Add is
// lost: an Add writes a cell it reached through some table, every later
// table holds that cell, and Load sums the table it loads, which is that
// table or a later one whenever the Add happened before the Load. Cells of
// Ps that GOMAXPROCS dropped keep their value and are still summed.
//
// # What Load guarantees
//
// Load is not linearizable with concurrent Adds: it reads the cells one
// after another, so it may count an Add on a cell it reads late and miss
// an Add that finished earlier on a cell it had already read. What holds is
// this: Load returns the sum of a set S of Adds such that
//
//   - S contains every Add that happens before Load is called, and
//   - S contains no Add that Load's return happens before,
//
// where "happens before" is the Go memory model's relation. With
// non-negative Adds only, Load thus lies between the total of the Adds
// completed before it began and the total of the Adds begun before it
// returned. Without concurrent Adds, Load is exact. Sums wrap around like
// int64 addition.
type Counter struct {
	_     noCopy
	cells perP[cell]
}

// cell is one P's share of a Counter, alone on its cache line(s).
type cell struct {
	n int64
	_ [lineSize - unsafe.Sizeof(int64(0))]byte
}

// plainAdd reports whether a pinned cell may be updated with a plain
// read-modify-write. Only the goroutine pinned to the cell's P writes the
// cell, and goroutines take turns on a P through the scheduler, whose P
// hand-offs order one goroutine's writes before the next one's: the same
// ground on which sync.Pool updates its per-P private slot without atomics.
// Load's atomic read of an aligned word then sees the old or the new value,
// never a mix. This needs 64-bit words (a 32-bit platform would tear the
// int64), and the race detector, which does not know that a pinned P
// excludes other writers, is given atomic adds instead.
const plainAdd = !race.Enabled && unsafe.Sizeof(uintptr(0)) == 8

// Add adds n to the counter.
func (c *Counter) Add(n int64) {
	for {
		pid := procPin()
		if x := c.cells.get(pid); x != nil {
			if plainAdd {
				x.n += n
			} else {
				atomic.AddInt64(&x.n, n)
			}
			procUnpin()
			return
		}
		procUnpin()
		c.cells.grow(pid)
	}
}

// Load returns the sum of the cells; see the type's documentation for what
// it guarantees while Adds run concurrently.
func (c *Counter) Load() int64 {
	var sum int64
	for _, x := range c.cells.all() {
		sum += atomic.LoadInt64(&x.n)
	}
	return sum
}

// noCopy makes go vet's copylocks check report copies.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
