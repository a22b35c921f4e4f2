module github.com/cellrate/cellrate/bench

go 1.25.0

require (
	github.com/cellrate/cellrate v0.0.0-00010101000000-000000000000
	github.com/cellrate/cellrate/store/chirate v0.0.0-00010101000000-000000000000
	github.com/cellrate/cellrate/store/golimiter v0.0.0-00010101000000-000000000000
	github.com/cellrate/cellrate/store/ulule v0.0.0-00010101000000-000000000000
	github.com/go-chi/httprate v0.16.1
	github.com/juju/ratelimit v1.0.2
	github.com/platinummonkey/go-concurrency-limits v0.10.0
	github.com/puzpuzpuz/xsync/v4 v4.5.0
	github.com/sethvargo/go-limiter v0.7.1
	github.com/throttled/throttled/v2 v2.15.0
	github.com/tsenart/vegeta/v12 v12.13.0
	github.com/ulule/limiter/v3 v3.11.2
	go.uber.org/ratelimit v0.3.1
	golang.org/x/sys v0.44.0
	golang.org/x/time v0.15.0
	gonum.org/v1/plot v0.17.0
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/benbjohnson/clock v1.3.0 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/influxdata/tdigest v0.0.1 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	github.com/kr/pretty v0.3.1 // indirect
	github.com/mailru/easyjson v0.7.7 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/rogpeppe/go-internal v1.10.0 // indirect
	github.com/rs/dnscache v0.0.0-20230804202142-fc85eb664529 // indirect
	github.com/zeebo/xxh3 v1.0.2 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/net v0.40.0 // indirect
	golang.org/x/sync v0.16.0 // indirect
	golang.org/x/text v0.28.0 // indirect
	gopkg.in/check.v1 v1.0.0-20201130134442-10cb98267c6c // indirect
)

replace (
	github.com/cellrate/cellrate => ../
	github.com/cellrate/cellrate/store/chirate => ../store/chirate
	github.com/cellrate/cellrate/store/golimiter => ../store/golimiter
	github.com/cellrate/cellrate/store/ulule => ../store/ulule
)
