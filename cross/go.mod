module github.com/cellrate/cellrate/cross

go 1.25.0

require (
	github.com/cellrate/cellrate v0.0.0-00010101000000-000000000000
	golang.org/x/sys v0.44.0
)

require github.com/klauspost/cpuid/v2 v2.4.2 // indirect

// The harness tests the main module in the directory above; pathprobe builds
// atomic128 from there with each row's flags.
replace github.com/cellrate/cellrate => ../
