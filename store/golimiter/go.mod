module github.com/cellrate/cellrate/store/golimiter

go 1.25.0

require (
	github.com/cellrate/cellrate v0.0.0-00010101000000-000000000000
	github.com/sethvargo/go-limiter v0.7.1
)

require (
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	golang.org/x/sys v0.44.0 // indirect
)

replace github.com/cellrate/cellrate => ../..
