# Regenerate asm/asm_amd64.s with the avo program in gen/ (its own module).
generate:
	go -C gen run . -out ../asm/asm_amd64.s

# Regenerate and fail if the committed assembly differs from what gen writes.
generate-check: generate
	git diff --exit-code -- asm/

.PHONY: generate generate-check

# The side-by-side benchmarks against the peer libraries (bench/, its own
# module): prints ratio tables and writes bench/report/ (README.md,
# bench.txt, limiters.svg, primitives.svg). About 5 minutes.
bench:
	cd bench && go run ./cmd/report -out report

# The same in under two minutes, into bench/out/quick/ (not committed).
bench-quick:
	cd bench && go run ./cmd/report -quick -out out/quick

# The long stress runs (stress/, its own module): every test STRESS_DUR
# long, with the race detector and without (the race detector changes
# what is atomic in striped.Counter). CI runs the -short size instead.
STRESS_DUR ?= 5s
stress:
	cd stress && go test -race -count=1 -timeout 60m ./... -stress.dur=$(STRESS_DUR)
	cd stress && go test -count=1 -timeout 60m ./... -stress.dur=$(STRESS_DUR)
.PHONY: bench bench-quick stress
