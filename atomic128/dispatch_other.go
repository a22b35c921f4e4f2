//go:build !(gc && !purego && (amd64 || arm64))

package atomic128

import "github.com/cellrate/cellrate/internal/path128"

// No hardware path in this build: primary and secondary are values that
// path128.Active never takes, so the methods always run the fallback and
// these functions are never called.
const (
	primary   = path128.Path(254)
	secondary = path128.Path(255)
)

func loadPrimary(p *[2]uint64) (v1, v2 uint64)   { return fallbackLoad(p) }
func loadSecondary(p *[2]uint64) (v1, v2 uint64) { return fallbackLoad(p) }

func storePrimary(p *[2]uint64, v1, v2 uint64)   { fallbackStore(p, v1, v2) }
func storeSecondary(p *[2]uint64, v1, v2 uint64) { fallbackStore(p, v1, v2) }

func swapPrimary(p *[2]uint64, v1, v2 uint64) (o1, o2 uint64) {
	return fallbackSwap(p, v1, v2)
}

func swapSecondary(p *[2]uint64, v1, v2 uint64) (o1, o2 uint64) {
	return fallbackSwap(p, v1, v2)
}

func casPrimary(p *[2]uint64, o1, o2, n1, n2 uint64) bool {
	return fallbackCas(p, o1, o2, n1, n2)
}

func casSecondary(p *[2]uint64, o1, o2, n1, n2 uint64) bool {
	return fallbackCas(p, o1, o2, n1, n2)
}
