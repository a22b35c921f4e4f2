# cellrate's tasks. `make help` lists them; README.md says which to run first.

GO ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: help test lint ci

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

test: ## vet, the unit tests, and the unit tests again under -race (-short)
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -race -short ./...

lint: ## staticcheck, at a pinned version
	$(GO) run $(STATICCHECK) ./...

# Regenerate asm/asm_amd64.s with the avo program in gen/ (its own module).
generate:
	go -C gen run . -out ../asm/asm_amd64.s

# Regenerate and fail if the committed assembly differs from what gen writes.
generate-check: generate
	git diff --exit-code -- asm/

.PHONY: generate generate-check

# striped's benchmarks, each beside its baseline in the same run: Counter.Add
# vs one sync/atomic.Int64, the sharded Limiter vs one bucket cell, at
# GOMAXPROCS 1 and 2 (-cpu; nothing changes GOMAXPROCS for good). Compare
# with `go run golang.org/x/perf/cmd/benchstat@latest /tmp/bench-striped.txt`.
bench-striped:
	$(GO) test -run '^$$' -bench . -benchmem -cpu 1,2 -count 6 -benchtime 300ms ./striped/ | tee /tmp/bench-striped.txt

.PHONY: bench-striped
