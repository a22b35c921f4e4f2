module github.com/cellrate/cellrate/store/ulule

go 1.25.0

require (
	github.com/cellrate/cellrate v0.0.0-00010101000000-000000000000
	github.com/ulule/limiter/v3 v3.11.2
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/stretchr/testify v1.8.3 // indirect
	golang.org/x/sys v0.44.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace github.com/cellrate/cellrate => ../..
