package asm

// The reference functions give each operation's meaning as plain Go, with
// no atomicity: RefCas is what every Cas* routine does, RefLoad every Load*,
// and so on (each routine's doc gives the pseudo-code). They are the
// specification the tests hold the assembly to, and the body the lock-based
// fallback in atomic128 runs under its locks.

// RefCas is the compare-and-swap.
func RefCas(p *[2]uint64, old1, old2, new1, new2 uint64) (swapped bool) {
	if p[0] != old1 || p[1] != old2 {
		return false
	}
	p[0], p[1] = new1, new2
	return true
}

// RefLoad is the load.
func RefLoad(p *[2]uint64) (v1, v2 uint64) {
	return p[0], p[1]
}

// RefStore is the store.
func RefStore(p *[2]uint64, v1, v2 uint64) {
	p[0], p[1] = v1, v2
}

// RefSwap is the swap.
func RefSwap(p *[2]uint64, new1, new2 uint64) (old1, old2 uint64) {
	old1, old2 = p[0], p[1]
	p[0], p[1] = new1, new2
	return old1, old2
}
