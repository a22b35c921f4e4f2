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
