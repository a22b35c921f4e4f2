//go:build !(gc && !purego && (amd64 || arm64))

package atomic128

// floors: no assembly in this build, so no floors beside sync/atomic.
var floors map[string][]floor

// ratios: no floors, no ratios.
func ratios() []ratio { return nil }
