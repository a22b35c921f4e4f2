package ulule

import (
	"crypto/rand"
	"sync"
	"sync/atomic"
)

// resets gives each key Reset has started afresh a new name in the
// tables: the key behind a byte 0xff and a random 64-bit generation, a
// name no client can guess, so its old slot is never read again and idles
// out. Until the first Reset, key costs one atomic
// load and no allocation.
type resets struct {
	live atomic.Int64
	mu   sync.RWMutex
	m    map[string]string
	max  int
}

func (r *resets) init(max int) {
	r.m = make(map[string]string)
	r.max = max
}

// key returns the name key has in the tables.
func (r *resets) key(key string) string {
	if r.live.Load() == 0 {
		return key
	}
	r.mu.RLock()
	k, ok := r.m[key]
	r.mu.RUnlock()
	if ok {
		return k
	}
	return key
}

// bump gives key a new name and returns it. When MaxResets keys are
// remembered, all of them are forgotten first: each goes back to its
// original name, whose state is what it was before its first Reset.
func (r *resets) bump(key string) string {
	var g [9]byte
	g[0] = 0xff
	rand.Read(g[1:])
	name := string(g[:]) + key
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.m[key]; !ok && len(r.m) >= r.max {
		clear(r.m)
	}
	r.m[key] = name
	r.live.Store(int64(len(r.m)))
	return name
}
