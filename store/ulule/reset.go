package ulule

import (
	"crypto/rand"
	"sync"
	"sync/atomic"
)

// resets gives each key Reset has started afresh a new name in the
// tables: the key behind a byte 0xff and a random 64-bit generation, a
// name no client can guess, so its old slot is never read again and idles
// out. Until the first Reset, key costs one atomic load and no allocation.
//
// A remembered key is forgotten (goes back to its own name) only to make
// room, and only once its new name is paid under every Rate: its state
// before the Reset then admits at most what the new name would. The new
// name is checked under the write lock, and every decision on a
// remembered key runs under the read lock with its time read inside it,
// so no decision on the new name is in flight, and every later one is at
// or after the time the new name was found paid.
type resets struct {
	live atomic.Int64
	mu   sync.RWMutex
	m    map[string]string
	ring []string // the keys of m, in a ring from hand; full once len(m) == max
	hand int
	max  int
}

// forgetTries is how many remembered keys a Reset past MaxResets checks,
// from the ring's hand on, for one paid to forget.
const forgetTries = 4

func (r *resets) init(max int) {
	r.m = make(map[string]string)
	r.max = max
}

// acquire returns the name key has in the tables, holding the read lock
// (locked) if resets are remembered: the caller decides on the name,
// reading its time after acquire, then calls release.
func (r *resets) acquire(key string) (name string, locked bool) {
	if r.live.Load() == 0 {
		return key, false
	}
	r.mu.RLock()
	if k, ok := r.m[key]; ok {
		return k, true
	}
	return key, true
}

func (r *resets) release(locked bool) {
	if locked {
		r.mu.RUnlock()
	}
}

// bump gives key a new name and returns it, holding the write lock until
// done is called (the caller reads the new name's state first). With
// MaxResets keys remembered, it first forgets one whose name paid reports
// as paid, checking up to forgetTries of them; ok is false, with nothing
// changed and no lock held, if none was.
func (r *resets) bump(key string, paid func(name string) bool) (name string, done func(), ok bool) {
	var g [9]byte
	g[0] = 0xff
	rand.Read(g[1:])
	name = string(g[:]) + key
	r.mu.Lock()
	if _, had := r.m[key]; !had {
		if len(r.ring) < r.max {
			r.ring = append(r.ring, key)
		} else if !r.forget(key, paid) {
			r.mu.Unlock()
			return "", nil, false
		}
	}
	r.m[key] = name
	r.live.Store(int64(len(r.m)))
	return name, r.mu.Unlock, true
}

// forget drops a paid key from the ring's next forgetTries, putting key in
// its place; the unpaid ones it passes go to the back.
func (r *resets) forget(key string, paid func(name string) bool) bool {
	for range min(forgetTries, len(r.ring)) {
		old := r.ring[r.hand]
		if paid(r.m[old]) {
			delete(r.m, old)
			r.ring[r.hand] = key
			r.hand = (r.hand + 1) % len(r.ring)
			return true
		}
		r.hand = (r.hand + 1) % len(r.ring)
	}
	return false
}
