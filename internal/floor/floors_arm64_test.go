//go:build gc && !purego && arm64

package floor

import "golang.org/x/sys/cpu"

var floors = []struct {
	name string
	ok   bool
	fn   func(*[2]uint64)
}{
	{"BareCASPAL", cpu.ARM64.HasATOMICS, BareCASPAL},
	{"BareLDAXPSTLXP", true, BareLDAXPSTLXP},
}
