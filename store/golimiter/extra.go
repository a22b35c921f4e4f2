package golimiter

import (
	"sync"
	"sync/atomic"
)

// extra holds Burst's tokens: a few keys, each with tokens that lapse at a
// time. Take looks here only while some key holds any, so a store that
// never calls Burst pays one atomic load.
type extra struct {
	live atomic.Int64
	mu   sync.Mutex
	m    map[string]*grant
	max  int
}

type grant struct {
	n     uint64
	until int64
}

func (e *extra) init(max int) {
	e.m = make(map[string]*grant)
	e.max = max
}

// take takes one extra token of key at now, if it holds one, and returns
// how many it has left.
func (e *extra) take(key string, now int64) (bool, uint64) {
	if e.live.Load() == 0 {
		return false, 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	g := e.valid(key, now)
	if g == nil {
		return false, 0
	}
	g.n--
	left := g.n
	if left == 0 {
		e.drop(key)
	}
	return true, left
}

// get returns key's extra tokens at now.
func (e *extra) get(key string, now int64) uint64 {
	if e.live.Load() == 0 {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if g := e.valid(key, now); g != nil {
		return g.n
	}
	return 0
}

// add gives key n more tokens until now+d.
func (e *extra) add(key string, n uint64, now, d int64) error {
	if n == 0 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	g := e.valid(key, now)
	if g == nil {
		if len(e.m) >= e.max {
			e.sweep(now)
		}
		if len(e.m) >= e.max {
			return ErrTooMany
		}
		g = &grant{}
		e.m[key] = g
		e.live.Add(1)
	}
	if g.n += n; g.n < n {
		g.n = ^uint64(0) // saturated
	}
	g.until = now + d
	return nil
}

// valid returns key's grant if it has not lapsed at now, dropping it if it has.
func (e *extra) valid(key string, now int64) *grant {
	g := e.m[key]
	if g != nil && now >= g.until {
		e.drop(key)
		return nil
	}
	return g
}

func (e *extra) drop(key string) {
	delete(e.m, key)
	e.live.Add(-1)
}

func (e *extra) sweep(now int64) {
	for k, g := range e.m {
		if now >= g.until {
			e.drop(k)
		}
	}
}

func (e *extra) clear() {
	e.mu.Lock()
	defer e.mu.Unlock()
	clear(e.m)
	e.live.Store(0)
}
