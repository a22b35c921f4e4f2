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
// implementation's row as cells: the median ns/op (± spread) and the ratio
// to the baseline at each goroutine count, then the contention ratio.
func header(t *table) []string {
	h := []string{t.scenario}
	for _, g := range t.gs {
		h = append(h, g+" ns/op", "vs "+t.baseline)
	}
	if len(t.gs) > 1 {
		h = append(h, t.gs[1]+" / "+t.gs[0])
	}
	return h
}

// contention is the ns/op at the second goroutine count (one per P) over
// the ns/op on one goroutine: how much a call slows down when every P
// makes it at once (RunParallel's ns/op is wall time over all calls).
func (r *results) contention(t *table, impl string) string {
	if len(t.gs) < 2 {
		return ""
	}
	one := r.stat(t.name[[2]string{impl, t.gs[0]}])
	all := r.stat(t.name[[2]string{impl, t.gs[1]}])
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
		if a := r.metrics[t.name[[2]string{impl, g}]]["allocs/op"]; a > 0 {
			ns += fmt.Sprintf(" (%g allocs/op)", a)
		}
		cells = append(cells, ns, vs)
	}
	if len(t.gs) > 1 {
		cells = append(cells, r.contention(t, impl))
	}
	return cells
}

// text prints benchstat-style tables: for each scenario, ns/op ± spread
// and the ratio to the baseline at each goroutine count.
func text(w io.Writer, r *results, acc []accRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	line := func(cells []string) { fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t") }
	for _, t := range r.tables() {
		line(header(t))
		for _, impl := range t.impls {
			line(r.row(t, impl))
		}
		fmt.Fprintln(tw)
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

// markdown writes the report.
func markdown(w io.Writer, r *results, acc []accRow, cfg config) {
	mode := "full"
	if cfg.quick {
		mode = "quick"
	}
	fmt.Fprintf(w, "# cellrate benchmarks\n\n")
	fmt.Fprintf(w, "Produced by `make bench` (%s mode) on %s: %s/%s, %s, GOMAXPROCS %d, %s.\n\n",
		mode, time.Now().UTC().Format("2006-01-02"), r.goos, r.goarch, r.cpu, r.procs, runtime.Version())
	if cfg.loadBefore != "" && cfg.loadAfter != "" {
		fmt.Fprintf(w, "Load average (1 min) before the run %s, after it %s.\n", cfg.loadBefore, cfg.loadAfter)
	}
	fmt.Fprintf(w, "Command, in `bench/`: %s; raw output in [bench.txt](bench.txt) (`benchstat bench.txt` reads it).\n", cfg.command)
	fmt.Fprintf(w, "Each cell is the median ns/op of %d round(s) (± the largest distance of a round from it, when several) and its ratio to the baseline named in the header (below 1 is faster). "+
		"`g` is the number of goroutines: 1 is a plain loop, the others `RunParallel`. "+
		"`clock` reads the implementation's own clock on every call; `injected` passes a time that moves %dns per call (peers that only read a clock interface get one that returns the injected time). "+
		"`admit` offers far below the rate (1e9/s, burst 1e9); `deny` offers far above it (100/s, burst 1). "+
		"The last column is the ns/op with one goroutine per P over the ns/op on one goroutine: how much each call slows down under contention. "+
		"Every implementation made 0 allocations per call unless the table says otherwise.\n\n", cfg.count, 100)
	fmt.Fprintf(w, "![ns/op per limiter and goroutine count](limiters.svg)\n\n")
	line := func(cells []string) { fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | ")) }
	for _, t := range r.tables() {
		fmt.Fprintf(w, "### %s\n\n", t.scenario)
		h := header(t)
		h[0] = "implementation"
		line(h)
		fmt.Fprintf(w, "|---|%s%s\n", strings.Repeat("--:|--:|", len(t.gs)), strings.Repeat("--:|", len(h)-1-2*len(t.gs)))
		for _, impl := range t.impls {
			line(r.row(t, impl))
		}
		if missing := absent(t); len(missing) > 0 {
			fmt.Fprintf(w, "\nNot in this run: %s.\n", strings.Join(missing, "; "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "![ns/op of the primitives](primitives.svg)\n\n")
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
