package redis

import (
	"context"
	"errors"
)

// ErrClosed is what a TwoTier returns, denying, for a request its pool
// cannot serve after Close. A Limiter or TwoTier that no constructor made
// (a zero value or a nil pointer) denies every request with an error that
// is ErrClosed for errors.Is.
var ErrClosed = errors.New("redis: TwoTier closed")

// Close gives back to Redis the units this process borrowed and has not
// spent, so other processes can have them at once, and makes later
// requests that need a round trip deny with ErrClosed. Units go back for a
// key only if nothing was admitted on it since this process's last borrow
// (the state Redis holds is still the one that borrow wrote): the borrow
// is then undone to what was spent, exactly; otherwise they are void when
// their lease ends, as without Close. It returns the first error from
// Redis, having tried every key.
func (t *TwoTier) Close(ctx context.Context) error {
	if t == nil || t.r == nil {
		return nil
	}
	t.closed.Store(true)
	var first error
	t.entries.Range(func(k, v any) bool {
		if err := t.giveBack(ctx, k.(string), v.(*entry)); err != nil && first == nil {
			first = err
		}
		return true
	})
	return first
}

// giveBack empties e's pool, live lease or not (a unit out of the pool is
// never spent), and sends back the units of its last borrow.
func (t *TwoTier) giveBack(ctx context.Context, key string, e *entry) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	tok := int64(e.word.Swap(0)&tokMask) + e.res.n - e.res.out
	e.res.out = e.res.n
	e.reserving.Store(false)
	give := min(tok, e.lastM)
	e.lastM = 0
	if give == 0 || e.last == "" {
		return nil
	}
	// Under the parameter set that wrote e.last: the key still holds that
	// value only if no decision has converted it to another rate since.
	_, _, _, err := t.r.decide(ctx, key, e.prog, false, 0, 0, true, true, give, 0, e.last)
	return err
}
