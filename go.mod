module github.com/cellrate/cellrate

go 1.25.0

require (
	github.com/klauspost/cpuid/v2 v2.4.2
	golang.org/x/sys v0.44.0
)
