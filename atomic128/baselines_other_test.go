//go:build !(gc && !purego && (amd64 || arm64))

package atomic128

import "testing"

// benchBaselines: no assembly in this build, so no floors beside sync/atomic.
func benchBaselines(*testing.B, string) {}
