package concurrency

import (
	"math/rand/v2"
	"sync/atomic"
)

// slot is one in-flight token's place. Its word is gen<<1 | busy: a
// release moves it from (gen, busy) to (gen+1, free) by compare-and-swap,
// so only the first release of a token whose gen matches frees it, and a
// copy of a token released later finds another generation and does nothing.
type slot struct {
	word atomic.Uint64
}

// slots is a table of twice the largest limit: at most max tokens are out
// (the in-flight count is taken before a slot and given back after it), so
// at least half the slots are free and a random probe finds one in two
// tries on average.
type slots []slot

func newSlots(max int) slots { return make(slots, 2*max) }

// take claims a free slot and returns its index and generation. The caller
// holds an in-flight unit, so a free slot exists.
func (s slots) take() (int, uint64) {
	n := uint64(len(s))
	i := rand.Uint64() % n
	for {
		w := s[i].word.Load()
		if w&1 == 0 && s[i].word.CompareAndSwap(w, w|1) {
			return int(i), w >> 1
		}
		if i++; i == n {
			i = 0
		}
	}
}

// free releases slot i if it still holds generation gen, and reports
// whether it did.
func (s slots) free(i int, gen uint64) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	return s[i].word.CompareAndSwap(gen<<1|1, (gen+1)<<1)
}

// busy counts the slots taken, for tests and leak checks.
func (s slots) busy() int {
	n := 0
	for i := range s {
		n += int(s[i].word.Load() & 1)
	}
	return n
}
