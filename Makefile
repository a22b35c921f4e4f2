# Regenerate asm/asm_amd64.s with the avo program in gen/ (its own module).
generate:
	go -C gen run . -out ../asm/asm_amd64.s

# Regenerate and fail if the committed assembly differs from what gen writes.
generate-check: generate
	git diff --exit-code -- asm/

.PHONY: generate generate-check

# Cross-architecture proof (internal/cmd/cross): every package's tests on
# arm64 (qemu-user with and without LSE, purego, -race in a qemu-system VM),
# amd64 (qemu-user CPU models, purego, -race natively), 386 and s390x, with
# the required atomic128 path for each CPU; and go vet on every target.
# Installs the Debian packages it lacks when run as root.
# CROSS_ARGS adds modules, e.g. CROSS_ARGS += -race-module stress
CROSS_ARGS ?=

.PHONY: cross vet-all cross-selftest
cross:
	go run ./internal/cmd/cross $(CROSS_ARGS)

vet-all:
	go run ./internal/cmd/cross -only vet

# Shows that a planted data race and a planted wrong path each fail the harness.
cross-selftest:
	CELLRATE_CROSS_SELFTEST=1 go test -run TestSelf -v -timeout 30m ./internal/cmd/cross
