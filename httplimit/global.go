package httplimit

import (
	"sync/atomic"

	"golang.org/x/sys/cpu"

	"github.com/cellrate/cellrate/internal/backoff"
	"github.com/cellrate/cellrate/internal/gcrastep"
	"github.com/cellrate/cellrate/limit"
)

// globalLimit is a policy's global limit: a GCRA word run by its pure step,
// kept here rather than in a gcra.Limiter so that a denial by the client's
// limit can be explained by what the global one would answer, taking
// nothing.
type globalLimit struct {
	ps  gcrastep.Params
	_   cpu.CacheLinePad // tat's line holds nothing the reads of ps would miss on
	tat atomic.Uint64
	_   cpu.CacheLinePad
}

// allowNAt admits n at now if all n fit, else none; a denial writes
// nothing.
func (g *globalLimit) allowNAt(now, n int64) (limit.Result, error) {
	var spin backoff.Spin
	for ; ; spin.Wait() {
		tat := g.tat.Load()
		next, r, err := g.ps.Step(gcrastep.State(tat), now, n)
		if !r.OK || uint64(next) == tat || g.tat.CompareAndSwap(tat, uint64(next)) {
			return r, err
		}
	}
}

// peek is what allowNAt(now, n) would answer, taking nothing.
func (g *globalLimit) peek(now, n int64) limit.Result {
	_, r, _ := g.ps.Step(gcrastep.State(g.tat.Load()), now, n)
	return r
}
