package main

import (
	"fmt"
	"net/http"
	"runtime"
	"sync"

	"github.com/cellrate/cellrate/bench"
	"github.com/cellrate/cellrate/bench/paired"
)

// The plan: every comparison the report makes, as pairs of cases measured
// with package paired. A pair is built (limiters made, keys primed) just
// before it is measured and dropped after, so that at most two
// implementations hold memory at once.

// kind says how a group's pairs compare.
type kind string

const (
	// speedup: the baseline's ns per operation over ours, "how many
	// times faster than the baseline".
	speedup kind = "speedup"
	// added: ours less the baseline in ns per operation, "what ours adds".
	added kind = "added"
)

// A group is one table: pairs measured the same way.
type group struct {
	ID    string `json:"id"`    // a short name, for the text output and the tests
	Title string `json:"title"` // what the table shows, in plain words
	Kind  kind   `json:"kind"`
	G     int    `json:"g"` // goroutines running each side at once
	Rows  []row  `json:"rows"`
}

// A row is one pair's samples.
type row struct {
	Label string        `json:"label"` // what is compared with the baseline
	Ours  paired.Sample `json:"ours"`
	Base  paired.Sample `json:"base"`
	// Proc is, per round, the process that measured it (0, 1, ...);
	// absent, every round is one process's.
	Proc []int `json:"proc,omitempty"`
}

// A pairSpec builds one pair: ours and the baseline, and the label.
type pairSpec struct {
	label string
	build func() (ours, base paired.Case, err error)
}

// A groupSpec is a group before it is measured: its pairs, measured at
// each of gs goroutine counts with the same built cases.
type groupSpec struct {
	id, title string
	kind      kind
	gs        []int
	pairs     []pairSpec
}

// goroutineCounts are 1 and, with more than one P, one goroutine per P.
func goroutineCounts() []int {
	if p := runtime.GOMAXPROCS(0); p > 1 {
		return []int{1, p}
	}
	return []int{1}
}

// label is how the report names an implementation: plain words, no
// benchmark names.
var label = map[string]string{
	"x-time-rate":              "golang.org/x/time/rate",
	"uber-ratelimit":           "go.uber.org/ratelimit",
	"juju-ratelimit":           "juju/ratelimit",
	"throttled-gcra":           "throttled/throttled GCRA",
	"mutex-bucket":             "token bucket behind a mutex",
	"cellrate-bucket":          "cellrate bucket",
	"cellrate-striped":         "cellrate striped",
	"cellrate-gcra":            "cellrate gcra",
	"cellrate-packed64-bucket": "cellrate packed64 bucket",
	"cellrate-packed64-window": "cellrate packed64 window",
	"cellrate-window":          "cellrate window",
	"cellrate-rate":            "cellrate rate (drop-in)",

	"keyed":          "cellrate keyed",
	"keyed-window":   "cellrate keyed, sliding window",
	"keyed-coarse":   "cellrate keyed, coarse clock",
	"syncmap-xrate":  "sync.Map of x/time/rate",
	"mutexmap-xrate": "map of x/time/rate + mutex",
	"sethvargo":      "sethvargo/go-limiter",
	"httprate":       "go-chi/httprate",
	"ulule":          "ulule/limiter",
	"holdup":         "HoldUp (sync.Map of mutex buckets)",

	"none":           "no middleware",
	"httplimit":      "cellrate httplimit",
	"httplimit-bare": "httplimit, header as key, no fields on 200",
}

func labelOf(name string) string {
	if l, ok := label[name]; ok {
		return l
	}
	return name
}

// planLimiters: every limiter against x/time/rate, admitting and denying,
// at its own clock and at an injected one.
func planLimiters() []groupSpec {
	loads := []struct {
		name, words string
		rate        float64
		burst       int64
	}{
		{"admit", "admitting", 1e9, 1e9},
		{"deny", "denying", 100, 1},
	}
	var base bench.Impl
	for _, im := range bench.Impls() {
		if im.Name == bench.Baseline {
			base = im
		}
	}
	var out []groupSpec
	for _, ld := range loads {
		for _, injected := range []bool{false, true} {
			clock := "its own clock"
			id := "limiters/" + ld.name
			if injected {
				clock, id = "an injected time", id+"/injected"
			}
			gs := groupSpec{id: id, kind: speedup, gs: goroutineCounts(),
				title: fmt.Sprintf("One decision, %s, at %s: times faster than golang.org/x/time/rate", ld.words, clock)}
			for _, im := range bench.Impls() {
				if im.Name == bench.Baseline || (im.Blocks && ld.name == "deny") || !im.Takes(ld.rate, ld.burst) {
					continue
				}
				gs.pairs = append(gs.pairs, pairSpec{labelOf(im.Name), func() (paired.Case, paired.Case, error) {
					return bench.LimiterCase(im.Name, im.New(ld.rate, ld.burst), injected),
						bench.LimiterCase(base.Name, base.New(ld.rate, ld.burst), injected), nil
				}})
			}
			out = append(out, gs)
		}
	}
	return out
}

// planKeyed: cellrate's keyed table against each peer, and keyed's own
// variants against it, with each library's own clock, for a key drawn
// from 1,000 or 1,000,000 each decided on once before.
func planKeyed(keyCounts []int) []groupSpec {
	impls := map[string]bench.KeyedImpl{}
	var names []string
	for _, im := range bench.KeyedImpls() {
		impls[im.Name] = im
		names = append(names, im.Name)
	}
	build := func(name string, keys []string) paired.Case {
		l := impls[name].New(len(keys))
		primeAll(l, keys)
		return bench.KeyedCase(name, l, keys)
	}
	var out []groupSpec
	for _, n := range keyCounts {
		var cached []string
		keysOf := func() []string { // made once per count, when first needed
			if cached == nil {
				cached = bench.Keys(n)
			}
			return cached
		}
		// keyed's table is built once per count and shared by its pairs:
		// priming a million keys per pair would double the run.
		var keyedCase *paired.Case
		ours := func() paired.Case {
			if keyedCase == nil {
				c := build("keyed", keysOf())
				keyedCase = &c
			}
			return *keyedCase
		}
		peers := groupSpec{id: fmt.Sprintf("keyed/%d", n), kind: speedup, gs: goroutineCounts(),
			title: fmt.Sprintf("One decision for a key drawn from %s: times faster cellrate keyed is than each peer", thousands(n))}
		variants := groupSpec{id: fmt.Sprintf("keyed/%d/variants", n), kind: speedup, gs: goroutineCounts(),
			title: fmt.Sprintf("keyed's variants, a key drawn from %s: times faster than cellrate keyed with its default clock", thousands(n))}
		for _, name := range names {
			switch name {
			case "keyed":
			case "keyed-window", "keyed-coarse":
				variants.pairs = append(variants.pairs, pairSpec{labelOf(name), func() (paired.Case, paired.Case, error) {
					return build(name, keysOf()), ours(), nil
				}})
			default:
				peers.pairs = append(peers.pairs, pairSpec{"vs " + labelOf(name), func() (paired.Case, paired.Case, error) {
					return ours(), build(name, keysOf()), nil
				}})
			}
		}
		out = append(out, peers, variants)
	}
	return out
}

// primeAll decides once for each key, on one goroutine per P, each a
// share of the keys: priming a million keys for each peer in each
// process is most of a run's time, and on a loaded machine more threads
// get more of the CPUs.
func primeAll(l bench.KeyedLimiter, keys []string) {
	p := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for i := range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, k := range keys[i*len(keys)/p : (i+1)*len(keys)/p] {
				l.Allow(k)
			}
		}()
	}
	wg.Wait()
}

// storeKeys is how many keys the stores decide for.
const storeKeys = 1000

// planStores: each of cellrate's stores for a limiter library against
// the store that library ships, deciding as its middleware does, for a
// key drawn from 1,000 each decided on once before, admitting.
func planStores() []groupSpec {
	gs := groupSpec{id: "stores", kind: speedup, gs: goroutineCounts(),
		title: fmt.Sprintf("Stores under the middleware you already run: one decision for a key drawn from %s, admitting, times faster cellrate's store is than the store it replaces", thousands(storeKeys))}
	var keys []string
	build := func(mk func(int) (bench.KeyedLimiter, error), name string) (paired.Case, error) {
		if keys == nil {
			keys = bench.Keys(storeKeys)
		}
		l, err := mk(len(keys))
		if err != nil {
			return paired.Case{}, err
		}
		primeAll(l, keys)
		return bench.KeyedCase(name, l, keys), nil
	}
	for _, p := range bench.StorePairs() {
		gs.pairs = append(gs.pairs, pairSpec{storeLabel[p.Name], func() (paired.Case, paired.Case, error) {
			ours, err := build(p.Ours, "cellrate/"+p.Name)
			if err != nil {
				return ours, ours, err
			}
			base, err := build(p.Base, p.Name)
			return ours, base, err
		}})
	}
	return []groupSpec{gs}
}

// storeLabel names each store pair: the call measured, ours against the
// shipped store.
var storeLabel = map[string]string{
	"sethvargo/go-limiter": "sethvargo/go-limiter Take: cellrate store vs memorystore",
	"ulule/limiter":        "ulule/limiter Get: cellrate store vs memory store",
	"go-chi/httprate":      "go-chi/httprate Get + IncrementBy: cellrate counter vs local counter",
}

// planHTTP: each middleware's ServeHTTP in front of the trivial handler,
// in process, against no middleware (ns added per request) and httplimit
// against each peer, with 10 clients (nearly every request denied) and
// 100,000 (each decided on once before, nearly every request admitted).
func planHTTP() []groupSpec {
	impls := map[string]bench.HTTPImpl{}
	var names []string
	for _, im := range append(bench.HTTPImpls(), bench.HTTPLimitBare) {
		impls[im.Name] = im
		names = append(names, im.Name)
	}
	// Each middleware is built and primed once per client count and
	// shared by the pairs it is in.
	built := map[[2]any]paired.Case{}
	build := func(name string, clients int) (paired.Case, error) {
		if c, ok := built[[2]any{name, clients}]; ok {
			return c, nil
		}
		mw, err := impls[name].New(clients)
		if err != nil {
			return paired.Case{}, fmt.Errorf("%s: %w", name, err)
		}
		var h http.Handler = mw(bench.Trivial())
		if clients > 10 {
			bench.Prime(h, clients)
		}
		c := bench.HTTPCase(name, h, bench.ClientAddrs(clients))
		built[[2]any{name, clients}] = c
		return c, nil
	}
	both := func(a, b string, clients int) func() (paired.Case, paired.Case, error) {
		return func() (paired.Case, paired.Case, error) {
			x, err := build(a, clients)
			if err != nil {
				return x, x, err
			}
			y, err := build(b, clients)
			return x, y, err
		}
	}
	var out []groupSpec
	for _, sc := range []struct {
		clients int
		words   string
	}{{10, "10 clients, nearly every request denied (the 429 path)"}, {100_000, "100,000 clients, nearly every request admitted"}} {
		add := groupSpec{id: fmt.Sprintf("http/%d/added", sc.clients), kind: added, gs: []int{1},
			title: fmt.Sprintf("ns each middleware adds to a request, in process, %s", sc.words)}
		vs := groupSpec{id: fmt.Sprintf("http/%d", sc.clients), kind: speedup, gs: []int{1},
			title: fmt.Sprintf("Times faster cellrate httplimit is than each peer, in process, %s", sc.words)}
		for _, name := range names {
			if name == "none" {
				continue
			}
			add.pairs = append(add.pairs, pairSpec{labelOf(name), both(name, "none", sc.clients)})
			if name != "httplimit" && name != "httplimit-bare" {
				vs.pairs = append(vs.pairs, pairSpec{"vs " + labelOf(name), both("httplimit", name, sc.clients)})
			}
		}
		out = append(out, add, vs)
	}
	return out
}

// thousands writes n with commas: 1,000,000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
