// Package copies copies a Limiter; TestVetReportsCopies expects go vet's
// copylocks check to report each copy.
package copies

import "github.com/cellrate/cellrate/httplimit"

func byValue(l httplimit.Limiter) {} // want: passes lock by value

func assign(l *httplimit.Limiter) {
	m := *l // want: assignment copies lock value
	_ = m
}
