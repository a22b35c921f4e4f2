# cellrate's tasks. `make help` lists them; README.md says which to run first.

GO ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: help generate generate-check test lint ci

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

generate: ## regenerate asm/asm_amd64.s with the avo program in gen/ (its own module)
	$(GO) -C gen run . -out ../asm/asm_amd64.s

generate-check: generate ## regenerate and fail if the committed assembly differs
	git diff --exit-code -- asm/

test: ## vet, the unit tests, and the unit tests again under -race (-short)
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -race -short ./...

lint: ## staticcheck, at a pinned version
	$(GO) run $(STATICCHECK) ./...

# Each benchmark runs beside its baseline in the same run (Counter.Add vs one
# sync/atomic.Int64, the sharded Limiter vs one bucket cell) at GOMAXPROCS 1
# and 2 through -cpu; nothing changes GOMAXPROCS for good.
bench-striped: ## striped's benchmarks and baselines at -cpu 1,2; benchstat /tmp/bench-striped.txt
	$(GO) test -run '^$$' -bench . -benchmem -cpu 1,2 -count 6 -benchtime 300ms ./striped/ | tee /tmp/bench-striped.txt

.PHONY: bench-striped
