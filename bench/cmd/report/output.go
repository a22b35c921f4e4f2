package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cellrate/cellrate/bench"
)

// fmtStat formats a median and, when there were several runs, its spread.
func fmtStat(s stat) string {
	if s.n < 2 {
		return fmtNS(s.median)
	}
	return fmt.Sprintf("%s ±%.0f%%", fmtNS(s.median), 100*s.spread)
}

func fmtNS(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// header and row return a scenario table's header and an
// implementation's row as cells: the median ns/op (± spread) and, when
// the table has a baseline, the ratio to it at each goroutine count, then
// the contention ratio when the run had more than one P.
func (r *results) header(t *table) []string {
	h := []string{t.scenario}
	for _, g := range t.gs {
		h = append(h, fmt.Sprintf("g=%d ns/op", g))
		if t.baseline != "" {
			h = append(h, "vs "+t.baseline)
		}
	}
	if r.contended(t) {
		h = append(h, fmt.Sprintf("g=%d / g=1", r.procs))
	}
	return h
}

// contended reports whether t has a contention column: a g=GOMAXPROCS
// column with GOMAXPROCS above 1 beside the g=1 one.
func (r *results) contended(t *table) bool {
	return r.procs > 1 && slices.Contains(t.gs, 1) && slices.Contains(t.gs, r.procs)
}

// contention is the ns/op at one goroutine per P over the ns/op on one
// goroutine: how much a call slows down when every P makes it at once
// (RunParallel's ns/op is wall time over all calls).
func (r *results) contention(t *table, impl string) string {
	one := r.stat(t.name[key{impl, 1}])
	all := r.stat(t.name[key{impl, r.procs}])
	if !one.ok || !all.ok {
		return "-"
	}
	return fmt.Sprintf("%.2fx", all.median/one.median)
}

func (r *results) row(t *table, impl string) []string {
	cells := []string{impl}
	for _, g := range t.gs {
		s, ratio, ok := r.cell(t, impl, g)
		ns, vs := "-", ""
		if s.ok {
			ns = fmtStat(s)
		}
		if ok {
			vs = fmt.Sprintf("%.2fx", ratio)
		}
		if a := r.metrics[t.name[key{impl, g}]]["allocs/op"]; a > 0 {
			ns += fmt.Sprintf(" (%g allocs/op)", a)
		}
		cells = append(cells, ns)
		if t.baseline != "" {
			cells = append(cells, vs)
		}
	}
	if r.contended(t) {
		cells = append(cells, r.contention(t, impl))
	}
	return cells
}

// machine describes where the benchmarks ran.
func (r *results) machine() string {
	cpu := r.cpu
	if cpu == "" {
		cpu = "CPU model not reported"
	}
	usable := "the CPUs this process could use were not recorded"
	if r.usable > 0 {
		usable = fmt.Sprintf("%s usable by this process (its affinity mask)", plural(r.usable, "CPU"))
	}
	return fmt.Sprintf("%s/%s, %s, %s, GOMAXPROCS %d", r.goos, r.goarch, cpu, usable, r.procs)
}

// gs is every goroutine count in the run, ascending.
func gs(tabs []*table) []int {
	var out []int
	for _, t := range tabs {
		out = append(out, t.gs...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// text prints benchstat-style tables: for each scenario, ns/op ± spread
// and the ratio to the baseline at each goroutine count.
func text(w io.Writer, r *results, acc []accRow) {
	tabs := r.tables(baseline)
	fmt.Fprintf(w, "%s.\n", r.machine())
	for _, n := range cpuNotes(r.procs, r.usable, gs(tabs)) {
		fmt.Fprintln(w, n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	line := func(cells []string) { fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t") }
	for _, s := range all(tabs) {
		for _, t := range s.tables(tabs) {
			line(r.header(t))
			for _, impl := range t.impls {
				line(r.row(t, impl))
			}
			fmt.Fprintln(tw)
		}
	}
	line([]string{"accuracy", "schedule", "admitted", "exact", "ratio", "excess"})
	for _, a := range acc {
		line(a.cells())
	}
	tw.Flush()
}

// absent lists the limiters missing from a Limiter table, with why.
func absent(t *table) []string {
	if !strings.HasPrefix(t.scenario, "Limiter/") {
		return nil
	}
	var out []string
	for _, im := range bench.Impls() {
		switch {
		case slices.Contains(t.impls, im.Name):
		case im.Blocks:
			out = append(out, im.Name+" (waits instead of denying)")
		default:
			out = append(out, im.Name+" (cannot be built with this rate and burst)")
		}
	}
	return out
}

// markdown writes the report; chartExt is the charts' file extension.
func markdown(w io.Writer, r *results, acc []accRow, cfg config, chartExt string) {
	mode := "full"
	if cfg.quick {
		mode = "quick"
	}
	tabs := r.tables(baseline)
	fmt.Fprintf(w, "# cellrate benchmarks\n\n")
	fmt.Fprintf(w, "Produced by `make bench` (%s mode) on %s with %s.\n\n", mode, time.Now().UTC().Format("2006-01-02"), runtime.Version())
	fmt.Fprintf(w, "Machine: %s.\n", r.machine())
	for _, n := range cpuNotes(r.procs, r.usable, gs(tabs)) {
		fmt.Fprintf(w, "%s\n", n)
	}
	fmt.Fprintln(w)
	if cfg.loadBefore != "" && cfg.loadAfter != "" {
		fmt.Fprintf(w, "Load average (1 min) before the run %s, after it %s.\n", cfg.loadBefore, cfg.loadAfter)
	}
	fmt.Fprintf(w, "Command, in `bench/`: %s; raw output in [bench.txt](bench.txt) (`benchstat bench.txt` reads it).\n", cfg.command)
	fmt.Fprintf(w, "Each cell is the median ns/op of %d round(s) (± the largest distance of a round from it, when several) and its ratio to the baseline named in the header (below 1 is faster). "+
		"`g` is the number of goroutines: 1 is a plain loop, the others `RunParallel`. ", cfg.count)
	if r.procs > 1 {
		fmt.Fprintf(w, "The last column is the ns/op with one goroutine per P over the ns/op on one goroutine: how much each call slows down under contention. ")
	}
	fmt.Fprintf(w, "Every implementation made 0 allocations per call unless the table says otherwise.\n\n")
	if len(r.dups) > 0 {
		fmt.Fprintf(w, "Left out, as repeats of another benchmark's name (go test added the #NN): %s.\n\n", strings.Join(r.dups, ", "))
	}
	line := func(cells []string) { fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | ")) }
	for _, s := range all(tabs) {
		st := s.tables(tabs)
		if len(st) == 0 {
			continue
		}
		fmt.Fprintf(w, "## %s\n\n", s.title)
		if s.intro != "" {
			fmt.Fprintf(w, "%s\n\n", s.intro)
		}
		if s.chart != "" && len(charted(st)) > 0 {
			fmt.Fprintf(w, "![ns/op per implementation and goroutine count: %s](%s.%s)\n\n", strings.ToLower(s.title), s.chart, chartExt)
		}
		for _, t := range st {
			fmt.Fprintf(w, "### %s\n\n", t.scenario)
			h := r.header(t)
			h[0] = "implementation"
			line(h)
			fmt.Fprintf(w, "|---|%s\n", strings.Repeat("--:|", len(h)-1))
			for _, impl := range t.impls {
				line(r.row(t, impl))
			}
			if missing := absent(t); len(missing) > 0 {
				fmt.Fprintf(w, "\nNot in this run: %s.\n", strings.Join(missing, "; "))
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintf(w, "## Accuracy\n\n")
	fmt.Fprintf(w, "Each limiter (rate 1000/s, burst 50) gets the same %d requests, one after another on an injected clock. "+
		"*exact* is what an exact integer token bucket admits greedily from them; "+
		"*excess* is the most that, over any stretch of time T, the units admitted exceeded burst + rate·T (0 means the bound always held). "+
		"Schedules: `poisson-3x` offers three times the rate, one unit per request; `bursts` offers up to 100 requests of 1 to 5 units at one instant; "+
		"`poisson-3x-after-100y` is the first after 100 years of uptime; `poisson-3x-stale` is the first with each time read up to 2ms early, "+
		"so that times arrive out of order as they do from goroutines that read a clock and then wait for a CPU. "+
		"There, a limiter that takes a time earlier than its last one as now (and credits the refill again later) over-admits; "+
		"one that takes it as its last time (no refill) may exceed the bound over the given times by up to rate × staleness, never over the times it acted on. "+
		"The sliding windows (50 units per 50ms) are not token buckets: they may exceed the bucket's bound by up to their limit minus one, and admit less on bursts. "+
		"Left out: %s, which waits instead of denying.\n\n", cfg.requests, blocking())
	fmt.Fprintf(w, "| limiter | schedule | admitted | exact | admitted/exact | excess |\n|---|---|--:|--:|--:|--:|\n")
	for _, a := range acc {
		line(a.cells())
	}
}
