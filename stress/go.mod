module github.com/cellrate/cellrate/stress

go 1.25.0

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/cellrate/cellrate v0.0.0-00010101000000-000000000000
	github.com/dunglas/httpsfv v1.1.2
)

require (
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	golang.org/x/sys v0.44.0 // indirect
)

replace github.com/cellrate/cellrate => ../
