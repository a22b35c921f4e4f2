//go:build !(gc && !purego && (amd64 || arm64))

package atomic128

// No assembly in this build: the fallback runs every operation.

func load(p *[2]uint64) (v1, v2 uint64)                        { return fallbackLoad(p) }
func store(p *[2]uint64, v1, v2 uint64)                        { fallbackStore(p, v1, v2) }
func swap(p *[2]uint64, new1, new2 uint64) (old1, old2 uint64) { return fallbackSwap(p, new1, new2) }
func cas(p *[2]uint64, old1, old2, new1, new2 uint64) bool {
	return fallbackCas(p, old1, old2, new1, new2)
}
