package main

import (
	"fmt"
	"slices"
	"strings"
)

// A section of the report is one kind of thing measured: the benchmarks
// of some groups (BenchmarkX is group "X"), one table per scenario (every
// implementation's ns/op at each goroutine count and its ratio to the
// group's baseline), and optionally a chart of the section's scenarios
// that ran at more than one goroutine count.
//
// To add a section (keyed, httplimit, redis, ...):
//  1. in the bench module, write BenchmarkX with sub-benchmarks named
//     scenario.../implementation/g=N, running N over
//     bench.GoroutineCounts(runtime.GOMAXPROCS(0)) through run() (one
//     goroutine a plain loop, more RunParallel with bench.Parallelism);
//  2. append a section below naming group "X", the implementation its
//     ratios are taken against (or "" for none), a paragraph saying what
//     the scenarios do, and a chart file name if it should have a chart.
//
// Nothing else changes: the Markdown and text tables, the contention
// column and the chart come from the names. Tables of groups no section
// names still appear, under "Other benchmarks", so that a new benchmark
// is never silently left out.
type section struct {
	title string
	// intro is Markdown printed under the title; it may be empty.
	intro  string
	groups []group
	// chart names the chart file (without extension) and cols its
	// panels per row; "" for no chart.
	chart string
	cols  int
}

// A group is one BenchmarkX and the implementation its ratios are taken
// against.
type group struct{ name, baseline string }

var sections = []section{
	{
		title: "Limiters",
		intro: "`clock` reads the implementation's own clock on every call; `injected` passes a time that moves 100ns per call " +
			"(peers that only read a clock interface get one that returns the injected time). " +
			"`admit` offers far below the rate (1e9/s, burst 1e9); `deny` offers far above it (100/s, burst 1).",
		groups: []group{{"Limiter", "x-time-rate"}},
		chart:  "limiters", cols: 2,
	},
	{
		title: "Pacer",
		intro: "One Take that never sleeps: both pacers at 1e9 per second without slack, a rate calls never outrun, " +
			"so the figure is the cost of taking a slot (go.uber.org/ratelimit's atomic Take against cellrate's pacer, a GCRA cell). " +
			"`take` reads each pacer's own clock; `take-injected` passes a time that moves 100ns per call (uber through its Clock option; " +
			"with several goroutines uber's injected clock is one shared word, as its option allows).",
		groups: []group{{"Pacer", "uber-ratelimit"}},
	},
	{
		title: "Primitives",
		intro: "`Counter/add` adds 1 to a shared counter; `Pair/cas-inc` is a load and compare-and-swap loop that increments one half " +
			"of a 128-bit pair and decrements the other (`sync-atomic-64` does it on one 64-bit word, for scale); " +
			"`Clock/read` reads a clock once.",
		groups: []group{{"Counter", "sync-atomic"}, {"Pair", "mutex-pair"}, {"Clock", "time-now"}},
		chart:  "primitives", cols: 2,
	},
	{
		title: "Keyed limiters",
		intro: "One decision for a key drawn uniformly from `keys` random 16-byte strings, every key decided on once before " +
			"the timing, 100 per second with bursts of 100 per key. `Keyed` reads each implementation's own clock: " +
			"cellrate's `keyed` table (bucket and window, 5/4 slots a key; `keyed-coarse` reads nanotime.Coarse) against a `sync.Map` and a mutex map of " +
			"x/time/rate limiters, sethvargo/go-limiter's memorystore, go-chi/httprate's local counter, ulule/limiter's " +
			"memory store and seed 003's HoldUp design. `KeyedAt` passes a time moving 100ns per call, against one gcra " +
			"limiter's `AllowAt` plus hashing the key (the floor of a keyed decision).",
		groups: []group{{"Keyed", "keyed"}, {"KeyedAt", "gcra+maphash"}},
		chart:  "keyed", cols: 2,
	},
	{
		title: "HTTP middleware, in process",
		intro: "One request through each middleware's `ServeHTTP` and the same trivial handler, without a network: the work a " +
			"middleware adds to a request (`none` is the handler alone). Each is given the keyed limit (100 per second per client, " +
			"bursts of 100) and names clients by `X-Forwarded-For` from a loopback peer: cellrate's `httplimit` (with its RateLimit " +
			"fields on every response), go-chi/httprate, sethvargo/go-limiter's httplimit, ulule/limiter's stdlib middleware and " +
			"seed 003's HoldUp; `httplimit-bare` is httplimit doing what HoldUp does (the raw header value as the key, no fields on admitted " +
			"responses). `hot10`: ten clients, nearly every request denied (the 429 path); `distinct`: a client drawn from " +
			"100,000, each decided on once before the timing, nearly every request admitted. The vegeta runs over real " +
			"connections are in the HTTP middleware section below.",
		groups: []group{{"HTTP", "httplimit"}},
		chart:  "httpinproc", cols: 2,
	},
}

// other holds the tables of groups no section names.
var other = section{title: "Other benchmarks"}

// baseline returns the baseline of a group, "" if no section names it.
func baseline(name string) string {
	for _, s := range sections {
		for _, g := range s.groups {
			if g.name == name {
				return g.baseline
			}
		}
	}
	return ""
}

// tables returns the tables of s, in the order the benchmarks ran.
func (s section) tables(all []*table) []*table {
	var out []*table
	for _, t := range all {
		if s.title == other.title && !claimed(t.group()) || slices.ContainsFunc(s.groups, func(g group) bool { return g.name == t.group() }) {
			out = append(out, t)
		}
	}
	return out
}

// claimed reports whether a section names the group.
func claimed(name string) bool {
	return slices.ContainsFunc(sections, func(s section) bool {
		return slices.ContainsFunc(s.groups, func(g group) bool { return g.name == name })
	})
}

// all is sections and, when it has tables, other.
func all(tabs []*table) []section {
	out := slices.Clone(sections)
	if len(other.tables(tabs)) > 0 {
		out = append(out, other)
	}
	return out
}

// cpuNotes says what the goroutine counts measured on this machine:
// which columns ran more goroutines than there were CPUs to run them
// (those measure time-slicing as well as, or instead of, contention),
// and whether there is a contention column. usable is 0 when unknown.
func cpuNotes(procs, usable int, gs []int) []string {
	var notes []string
	cpus := usable
	if cpus == 0 {
		cpus = procs
	}
	switch {
	case procs == 1:
		notes = append(notes, "GOMAXPROCS is 1: one goroutine runs at a time, so no column measures contention. "+
			"The g>1 columns measure goroutines taking turns on one P (time-slicing and RunParallel's overhead), "+
			"and the report has no contention column. Run on two or more CPUs to measure contention.")
	case usable > 0 && procs > usable:
		notes = append(notes, fmt.Sprintf("GOMAXPROCS (%d) exceeds the CPUs this process may use (%d): "+
			"the g=%d column measures goroutines time-slicing on %s, not contention, and so does the g=%d / g=1 column.",
			procs, usable, procs, plural(usable, "CPU"), procs))
	default:
		notes = append(notes, fmt.Sprintf("The g=%d column runs one goroutine per P, each on a CPU of its own: it measures contention; "+
			"the last column (g=%d / g=1) is how much a call slows down when every P makes it at once.", procs, procs))
	}
	var over []string
	for _, g := range gs {
		// With GOMAXPROCS 1 every g>1 is explained above; so is g=procs
		// when it exceeds the CPUs.
		if g > cpus && procs > 1 && g != procs {
			over = append(over, fmt.Sprintf("g=%d", g))
		}
	}
	if len(over) > 0 {
		notes = append(notes, fmt.Sprintf("%s %s more goroutines than the %s: they take turns, so %s time-slicing as well as contention.",
			strings.Join(over, ", "), verb(len(over), "runs", "run"), plural(cpus, "CPU"), verb(len(over), "that column measures", "those columns measure")))
	}
	return notes
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func verb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
