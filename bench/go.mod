module github.com/cellrate/cellrate/bench

go 1.25.0

require (
	github.com/cellrate/cellrate v0.0.0-00010101000000-000000000000
	github.com/juju/ratelimit v1.0.2
	github.com/puzpuzpuz/xsync/v4 v4.5.0
	github.com/throttled/throttled/v2 v2.15.0
	go.uber.org/ratelimit v0.3.1
	golang.org/x/time v0.15.0
)

require (
	github.com/benbjohnson/clock v1.3.0 // indirect
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	github.com/kr/text v0.2.0 // indirect
	golang.org/x/sys v0.44.0 // indirect
)

replace github.com/cellrate/cellrate => ../
