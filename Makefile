# cellrate's tasks. `make help` lists them; README.md says which to run first.

GO ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: help generate generate-check test lint stress-short ci redis-test

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

generate: ## regenerate the assembly and its Go declarations from gen/'s table (gen is its own module; avo)
	$(GO) generate ./...

generate-check: generate ## regenerate, fail if any file differs from the commit, test the generator
	git diff --exit-code
	test -z "$$(git status --porcelain --untracked-files=all)" || { git status --short; exit 1; }
	$(GO) -C gen test -count=1 ./...

# What make test needs beyond Go: gcc (-race needs cgo) and redis-server
# (redis/ and store/ululeredis start real servers). Installed through apt
# when missing and run as root (as make cross installs qemu); otherwise one
# line says what to run.
TEST_DEPS := gcc redis-server
.PHONY: deps
deps: ## install gcc and redis-server when missing (as root, via apt-get), else say what to run
	@missing=""; for c in $(TEST_DEPS); do command -v $$c >/dev/null 2>&1 || missing="$$missing $$c"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "make deps: installing$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq$$missing >/dev/null || exit 1; \
	else \
		echo "make: missing$$missing; run: sudo apt-get install -y$$missing" >&2; exit 1; \
	fi

test: deps ## vet, the unit tests, the unit tests again under -race (-short), bench/'s accuracy tests, cross/'s own tests, redis-test, store-test
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -race -short ./...
	cd bench && $(GO) vet ./... && $(GO) test -count=1 -short ./...
	cd cross && $(GO) vet ./... && $(GO) test -count=1 ./...
	$(MAKE) redis-test
	$(MAKE) store-test

STORES := store/chirate store/golimiter store/ulule store/ululeredis
.PHONY: store-test
store-test: deps ## store/'s modules (httprate, go-limiter, ulule stores on keyed; ulule in Redis, on real redis-server): vet, tests, -race -short
	for m in $(STORES); do (cd $$m && $(GO) vet ./... && $(GO) test -count=1 ./... && $(GO) test -count=1 -race -short ./...) || exit 1; done

redis-test: deps ## redis/'s tests on real redis-server processes, then -race -short
	cd redis && $(GO) vet ./... && $(GO) test -count=1 ./... && $(GO) test -count=1 -race -short ./...

lint: ## staticcheck, at a pinned version, on every module
	$(GO) run $(STATICCHECK) ./...
	cd stress && $(GO) run $(STATICCHECK) ./...
	cd bench && $(GO) run $(STATICCHECK) ./...
	cd cross && $(GO) run $(STATICCHECK) ./...
	cd redis && $(GO) run $(STATICCHECK) ./...
	for m in $(STORES); do (cd $$m && $(GO) run $(STATICCHECK) ./...) || exit 1; done

stress-short: ## the stress suite at its -short size under -race, natively
	cd stress && $(GO) test -short -race -count=1 ./...

ci: generate-check test lint cross bench-quick ## everything CI runs

# Cross-architecture proof (cross/, a module of its own): every package's tests on
# arm64 (qemu-user with and without LSE, purego, -race in a qemu-system VM),
# amd64 (qemu-user CPU models, purego, -race natively), 386 and s390x, with
# the required atomic128 path for each CPU; and go vet on every target.
# Installs the Debian packages it lacks when run as root. By default the
# -race rows also run the stress module at its -short size. Module
# directories in CROSS_ARGS are relative to this directory.
CROSS_ARGS ?= -race-module stress

.PHONY: cross vet-all cross-selftest
cross: ## vet-all, then every package's tests on each arm64/amd64 CPU path, 386, s390x
	cd cross && $(GO) run . -root .. $(CROSS_ARGS)

vet-all: ## go vet on every GOOS/GOARCH the module claims, with and without purego
	cd cross && $(GO) run . -root .. -only vet

cross-selftest: ## show that a planted data race and a planted wrong path each fail cross
	cd cross && CELLRATE_CROSS_SELFTEST=1 $(GO) test -run TestSelf -v -timeout 30m .

.PHONY: bench bench-quick bench-agree stress

bench: ## the main job: paired comparisons with the peer libraries; writes bench/report/ and README.md's figures
	cd bench && $(GO) run ./cmd/report -out report -readme ../README.md

bench-quick: ## the same with fewer, shorter rounds, into bench/out/quick/ (not committed)
	cd bench && $(GO) run ./cmd/report -quick -out out/quick

# The report's intervals say where a rerun's figures land: bench-agree
# reruns the paired comparisons (into bench/out/rerun/) and counts how
# many of the rerun's figures fall within bench/report's intervals.
# QUICK=1 compares two fresh bench-quick runs (bench/out/agree-a, -b)
# instead; AGREE_WITH=path/results.json (from bench/) compares the rerun
# with another report than bench/report.
bench-agree: ## count how many figures of a rerun fall within the report's intervals (QUICK=1: two quick runs)
ifdef QUICK
	cd bench && $(GO) run ./cmd/report -quick -http=false -conc=false -out out/agree-a >/dev/null
	cd bench && $(GO) run ./cmd/report -quick -http=false -conc=false -out out/agree-b >/dev/null
	cd bench && $(GO) run ./cmd/report -agree out/agree-a/results.json out/agree-b/results.json
else
	cd bench && $(GO) run ./cmd/report -http=false -conc=false -out out/rerun >/dev/null
	cd bench && $(GO) run ./cmd/report -agree $(or $(AGREE_WITH),report/results.json) out/rerun/results.json
endif

# Every stress run takes STRESS_DUR (per CPU path, per limiter), with the
# race detector and without it (which changes what is atomic in
# striped.Counter); a soak: make stress STRESS_DUR=1m.
STRESS_DUR ?= 3s
stress: ## the long stress runs (stress/), -race and not, STRESS_DUR per test
	cd stress && $(GO) test -race -count=1 -timeout 60m ./... -stress.dur=$(STRESS_DUR)
	cd stress && $(GO) test -count=1 -timeout 60m ./... -stress.dur=$(STRESS_DUR)

# Mutation testing (internal/cmd/mutate, gremlins v0.6.0 from the module
# proxy): each package's -short tests against every mutant of it, one package
# and one mutant at a time, at most MUTATE_BUDGET per package; rewrites the
# results table of MUTANTS.md and fails on a survivor that is neither killed
# nor listed there as equivalent.
MUTATE_PKGS ?= gcra internal/gcrastep bucket internal/bucketcore window packed64 internal/packed64core striped atomic128 internal/slide internal/cell internal/backoff nanotime limit rate pacer keyed httplimit httplimit/clientkey adaptive concurrency debounce coalesce slidelog internal/netaddr internal/wallclock store/golimiter store/ulule store/chirate store/ululeredis
MUTATE_BUDGET ?= 20m
# MUTATE_FILES, a regexp on file names, mutates only those files of the
# packages, keeping the other files' results of earlier runs (chunks of a
# slow package: make mutate MUTATE_PKGS=redis MUTATE_FILES='^twotier').
MUTATE_FILES ?=
.PHONY: mutate
mutate: ## mutation testing of the decision and cell packages; writes MUTANTS.md's table
	$(GO) run ./internal/cmd/mutate -pkgs "$(MUTATE_PKGS)" -budget $(MUTATE_BUDGET) -files "$(MUTATE_FILES)"
