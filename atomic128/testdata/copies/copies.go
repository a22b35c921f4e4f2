// Package copies copies a Uint64Pair; TestVetReportsCopies expects go vet's
// copylocks check to report each copy.
package copies

import "github.com/cellrate/cellrate/atomic128"

func byValue(x atomic128.Uint64Pair) {} // want: passes lock by value

func assign(x *atomic128.Uint64Pair) {
	y := *x // want: assignment copies lock value
	_ = y
}
