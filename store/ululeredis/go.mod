module github.com/cellrate/cellrate/store/ululeredis

go 1.26.0

require (
	github.com/cellrate/cellrate v0.0.0-00010101000000-000000000000
	github.com/cellrate/cellrate/redis v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.23.0
	github.com/ulule/limiter/v3 v3.11.2
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace (
	github.com/cellrate/cellrate => ../..
	github.com/cellrate/cellrate/redis => ../../redis
)
