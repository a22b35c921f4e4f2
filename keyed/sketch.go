package keyed

import (
	"math/bits"
	"sync/atomic"
)

// The sketch keeps what evicted keys still owe, in fixed memory: an array
// of max-registers, two of them a key's, chosen by independent hashes of
// its tag (count-min style). Taking a slot from a key first raises both of
// the key's registers to what it owes; a key that starts in a fresh word
// starts from the least of its registers. Each register is at least what
// every key mapped to it owed when it was evicted, so a returning key owes
// at least its own debt; another key's debt in both registers can only
// delay a key, never admit one early. Registers never fall: what they hold
// is ordered like time, and a debt in the past is no debt.
type sketch []atomic.Uint64

// regs returns the indices of the registers of tag, from two multiplicative
// mixes of it, each reduced to len(s) by its high bits.
func (s sketch) regs(tag uint64) (uint64, uint64) {
	n := uint64(len(s))
	x := tag * 0x9E3779B97F4A7C15
	x ^= x >> 31
	i, _ := bits.Mul64(x*0xBF58476D1CE4E5B9, n)
	y := (tag ^ 0x94D049BB133111EB) * 0xD6E8FEB86659FD93
	y ^= y >> 29
	j, _ := bits.Mul64(y*0xC2B2AE3D27D4EB4F, n)
	return i, j
}

// owed returns the least of tag's registers: at most what any key with
// this tag was owed when evicted, and no less than what the last such key
// owed.
func (s sketch) owed(tag uint64) uint64 {
	i, j := s.regs(tag)
	return min(s[i].Load(), s[j].Load())
}

// record raises tag's registers to at least o.
func (s sketch) record(tag, o uint64) {
	if o == 0 {
		return
	}
	i, j := s.regs(tag)
	raise(&s[i], o)
	raise(&s[j], o)
}

func raise(x *atomic.Uint64, o uint64) {
	for {
		old := x.Load()
		if o <= old || x.CompareAndSwap(old, o) {
			return
		}
	}
}
