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

.PHONY: bench bench-quick stress

bench: ## benchmarks vs the peer libraries; writes bench/report/ (about 5 min)
	cd bench && $(GO) run ./cmd/report -out report

bench-quick: ## the same in under two minutes, into bench/out/quick/ (not committed)
	cd bench && $(GO) run ./cmd/report -quick -out out/quick

# Every stress test runs STRESS_DUR long, with the race detector and
# without it (which changes what is atomic in striped.Counter). CI runs
# the -short size instead: cd stress && go test -short -race ./...
STRESS_DUR ?= 5s
stress: ## the long stress runs (stress/), -race and not, STRESS_DUR per test
	cd stress && $(GO) test -race -count=1 -timeout 60m ./... -stress.dur=$(STRESS_DUR)
	cd stress && $(GO) test -count=1 -timeout 60m ./... -stress.dur=$(STRESS_DUR)
