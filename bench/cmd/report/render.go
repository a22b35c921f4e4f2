package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/cellrate/cellrate/bench/paired"
)

// level is every interval's nominal coverage.
const level = 0.95

// runSD is the run-to-run spread the processes of one run cannot show
// (paired.Runs): what moves a whole run alike, its stretch of time on a
// shared machine. Three make bench runs at load 10-14 on the 2-core
// machines moved apart by 1.2% (a relative standard deviation a run,
// over 134 comparisons) more than their processes' spread predicted;
// this rounds it up. make bench-agree checks it.
const runSD = 0.015

// wide is the interval width, as hi/lo of a ratio, past which the report
// says the spread is too wide to tell how large the difference is.
const wide = 1.5

// estimate returns r's comparison by the figure the report prefers (CPU
// time per operation where the system has a CPU clock) and, for scale,
// by the wall clock: the baseline's ns over ours for speedup, ours less
// the baseline's for added.
func estimate(k kind, r row) (cpu, wall paired.Estimate) {
	f := func(a, b []float64) paired.Estimate {
		if r.procs() > 1 {
			if k == added {
				return paired.DiffRuns(r.split(a), r.split(b), level, runSD)
			}
			return paired.RatioRuns(r.split(b), r.split(a), level, runSD)
		}
		if k == added {
			return paired.Diff(a, b, level)
		}
		return paired.Ratio(b, a, level)
	}
	return f(r.Ours.NsPerOp(), r.Base.NsPerOp()), f(r.Ours.Wall, r.Base.Wall)
}

// verdict says in words what e shows.
func verdict(k kind, e paired.Estimate) string {
	if e.Achieved == 0 {
		return "too few rounds for an interval"
	}
	if k == added {
		switch {
		case !e.Excludes(0):
			return "no cost shown (the interval holds 0)"
		case e.Hi-e.Lo > e.Center:
			return "spread too wide to say how much"
		case e.Center < 0:
			return "faster than none"
		}
		return "adds this"
	}
	switch {
	case !e.Excludes(1):
		return "no difference shown (the interval holds 1)"
	case e.Hi/e.Lo > wide:
		if e.Lo > 1 {
			return "faster; spread too wide to say how much"
		}
		return "slower; spread too wide to say how much"
	case e.Lo > 1:
		return "faster"
	}
	return "slower"
}

// fmtEst formats an estimate and its interval: "2.41x (2.30-2.55)" or
// "412 ns (398-430)".
func fmtEst(k kind, e paired.Estimate) string {
	if k == added {
		return fmt.Sprintf("%s ns (%s to %s)", ns(e.Center), ns(e.Lo), ns(e.Hi))
	}
	return fmt.Sprintf("%sx (%s-%s)", ratio(e.Center), ratio(e.Lo), ratio(e.Hi))
}

func ratio(v float64) string {
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v):
		return "?"
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func ns(v float64) string {
	switch a := math.Abs(v); {
	case math.IsInf(v, 0) || math.IsNaN(v):
		return "?"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// medianOf returns the median of v.
func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return math.NaN()
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func allocs(v float64) string {
	if v < 0.005 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)[:min(4, len(strconv.FormatFloat(v, 'f', -1, 64)))]
}

// sorted returns g's rows, fastest (largest speedup, least added) first.
func sorted(g group) []row {
	rows := slices.Clone(g.Rows)
	key := func(r row) float64 { e, _ := estimate(g.Kind, r); return e.Center }
	slices.SortStableFunc(rows, func(a, b row) int {
		if g.Kind == added {
			return cmpF(key(a), key(b))
		}
		return cmpF(key(b), key(a))
	})
	return rows
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// tableHeader and cells are a group's Markdown table.
func tableHeader(g group) []string {
	what := "times faster (95% interval)"
	if g.Kind == added {
		what = "ns added (95% interval)"
	}
	return []string{"", "ns/op", "baseline ns/op", what, "by wall clock", "verdict", "allocs/op"}
}

func cells(g group, r row) []string {
	e, w := estimate(g.Kind, r)
	wall := ratio(w.Center) + "x"
	if g.Kind == added {
		wall = ns(w.Center) + " ns"
	}
	return []string{r.Label, ns(medianOf(r.Ours.NsPerOp())), ns(medianOf(r.Base.NsPerOp())), fmtEst(g.Kind, e), wall, verdict(g.Kind, e), allocs(r.Ours.AllocsPerOp)}
}

func (res results) find(id string, g int) (group, bool) {
	for _, gr := range res.Groups {
		if gr.ID == id && gr.G == g {
			return gr, true
		}
	}
	return group{}, false
}

// render returns every file of the report, by name.
func render(res results) (map[string][]byte, error) {
	files := map[string][]byte{}
	js, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		return nil, err
	}
	files["results.json"] = append(js, '\n')
	for _, c := range charts(res) {
		b, err := c.png()
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", c.file, err)
		}
		files[c.file] = b
	}
	var md bytes.Buffer
	markdown(&md, res)
	files["README.md"] = md.Bytes()
	var fig bytes.Buffer
	figures(&fig, res)
	files["figures.md"] = fig.Bytes()
	return files, nil
}

func table(w io.Writer, g group) {
	line := func(c []string) { fmt.Fprintf(w, "| %s |\n", strings.Join(c, " | ")) }
	line(tableHeader(g))
	fmt.Fprintf(w, "|---|--:|--:|--:|--:|---|--:|\n")
	for _, r := range sorted(g) {
		line(cells(g, r))
	}
	fmt.Fprintln(w)
}

func plural(g int) string {
	if g == 1 {
		return "1 goroutine"
	}
	return fmt.Sprintf("%d goroutines, one per P", g)
}

// markdown writes the report.
func markdown(w io.Writer, res results) {
	m, c := res.Machine, res.Config
	mode := "`make bench`"
	if c.Quick {
		mode = "`make bench-quick`"
	}
	fmt.Fprintf(w, "# cellrate benchmarks\n\n")
	fmt.Fprintf(w, "Produced by %s on %s with %s in %s. Machine: %s/%s, %s, %d CPUs usable by this process, GOMAXPROCS %d. ",
		mode, m.Date, m.Go, m.Took, m.OS, m.Arch, m.CPU, m.CPUs, m.GOMAXPROCS)
	fmt.Fprintf(w, "Load average (1 min) %s before the run and %s after it: %s\n\n", m.LoadBefore, m.LoadAfter, loadWords(m))
	method(w, res)
	sections(w, res)
	accuracyMD(w, res)
	if res.HTTP != nil {
		res.HTTP.markdown(w)
	}
	if res.Conc != nil {
		res.Conc.markdown(w)
	}
}

// runFloor is the half width, relative, of an interval from processes
// that agree exactly: the run-to-run part alone.
func runFloor() float64 {
	e := paired.Runs([][]float64{{0}, {0}}, level, runSD)
	return e.Hi
}

// method writes how to read the figures: how they were measured and
// what the interval means.
func method(w io.Writer, res results) {
	c := res.Config
	fmt.Fprintf(w, "**How to read it.** Every figure is a paired comparison: ours and the baseline run in alternating turns of %v "+
		"(rounds of one turn of each, the order alternating), in one process, so that other work on the machine lands on both. "+
		"Each turn is timed by the CPU time the measuring threads used (the thread's own for 1 goroutine, the process's for more), "+
		"which leaves out the time they waited while other processes ran; *ns/op* is the median over the rounds. ", c.Turn)
	if c.Procs > 1 {
		fmt.Fprintf(w, "Each pair is measured in %d fresh processes, one after another, %d rounds in each: a process's heap, its scheduler "+
			"and the load and clock speed of its moment move every round in it alike, so rounds of one process are not independent "+
			"draws, and only the spread between processes shows how far a rerun may land. "+
			"*times faster* is the baseline's ns/op over ours: each process's estimate is the Hodges-Lehmann estimate of its rounds' ratios "+
			"(the median of the Walsh averages of their logarithms), the figure is their mean, and the %.0f%% interval is where a rerun "+
			"of this report on this machine lands, %d times in %d: Student's t with the processes' spread, holding this run's error and the rerun's, "+
			"and a run-to-run spread of %.1f%% (a relative standard deviation) that the processes of one run share and so cannot show "+
			"(the other load of its stretch of time; measured between earlier reruns), so that no interval is narrower than ±%.1f%%. "+
			"`make bench-agree` counts how many figures of a rerun fall within the intervals. *ns added* is the same for the difference. ",
			c.Procs, c.Rounds, 100*level, int(math.Round(level*20)), 20, 100*runSD, 100*runFloor())
	} else {
		fmt.Fprintf(w, "*times faster* is the baseline's ns/op over ours, estimated from the %d rounds' ratios (Hodges-Lehmann: the median of "+
			"the Walsh averages of their logarithms) with the %.0f%% interval of the Wilcoxon signed-rank test; *ns added* is the same for "+
			"the difference. The interval describes the noise between this one process's rounds, not between runs: a rerun (a fresh process, "+
			"another moment) may land outside it. ", c.Rounds, 100*level)
	}
	fmt.Fprintf(w, "The verdict says *no difference shown* when the interval holds 1 (or 0), and that the spread is too wide to say how much when "+
		"the interval is wider than a factor of %.1f. *by wall clock* is the same estimate from wall time, for scale: where it differs much "+
		"from the CPU figure, other processes took the CPUs. *allocs/op* are ours, on one goroutine. The per-round figures are in "+
		"[results.json](results.json).\n\n", wide)
}

// loadWords says what the load average means for the figures.
func loadWords(m machine) string {
	l, err := strconv.ParseFloat(m.LoadBefore, 64)
	if err != nil {
		return "unknown."
	}
	if l > 0.5*float64(m.CPUs) {
		return "the machine was shared with other work, which is why every comparison below is paired and timed by CPU time."
	}
	return "the machine was mostly idle."
}

// section is a heading with its text, chart and groups.
type sectionSpec struct {
	title, text string
	charts      []string
	ids         []string
}

func sectionSpecs(res results) []sectionSpec {
	var keyedIDs []string
	for _, n := range res.Config.KeyCounts {
		keyedIDs = append(keyedIDs, fmt.Sprintf("keyed/%d", n), fmt.Sprintf("keyed/%d/variants", n))
	}
	return []sectionSpec{
		{"Limiters", "One decision for one unit. *admitting*: rate 1e9/s, burst 1e9, so nearly every call is admitted; " +
			"*denying*: 100/s, burst 1, so nearly every call is denied. *its own clock*: each limiter reads the clock it reads by default; " +
			"*an injected time*: each is passed a time that moves 100 ns per call (peers that read a clock interface get one returning it). " +
			"go.uber.org/ratelimit waits instead of denying and is left out of the denying runs; packed64's limiters cannot be built for the admitting ones.",
			[]string{"limiters", "limiters-contended"},
			[]string{"limiters/admit", "limiters/deny", "limiters/admit/injected", "limiters/deny/injected"}},
		{"Keyed limiters", "One decision for a key drawn uniformly from the key count's random 16-byte keys, each key decided on once before the timing; " +
			"100 per second per key with bursts of 100, each library reading its own clock. cellrate's keyed table is sized at 5/4 slots a key. " +
			"The peers: a sync.Map and a mutex-guarded map of x/time/rate limiters, sethvargo/go-limiter's memorystore, go-chi/httprate's local counter, " +
			"ulule/limiter's memory store and HoldUp, a middleware design that keeps a sync.Map of mutex-guarded buckets.",
			[]string{"keyed"}, keyedIDs},
		{"HTTP middleware, in process", "One request through each middleware's `ServeHTTP` in front of the same trivial handler, without a network " +
			"(a reused request and recorder), each given the keyed limit and naming clients by `X-Forwarded-For` from a trusted loopback peer. " +
			"*ns added* is the middleware's ns/op less the bare handler's, measured in pairs. " +
			"`httplimit, header as key, no fields on 200` is httplimit doing only what HoldUp does.",
			[]string{"http-added", "http"}, []string{"http/10/added", "http/100000/added", "http/10", "http/100000"}},
		{"Stores under the middleware you already run", "Each of cellrate's stores for a limiter library against the store that library ships, " +
			"deciding as the library's middleware asks its store to, for a key drawn uniformly from 1,000 random 16-byte keys, each decided on once before the timing, " +
			"at a rate no key reaches (nearly every call admitted), each store reading its own clock. " +
			"sethvargo/go-limiter: `Take` (30,000 tokens per 10 ms) against its memorystore; ulule/limiter: the store's `Get` (the same Rate) against its memory store; " +
			"go-chi/httprate: what its middleware does per request under its mutex (`Get` of the two windows, the sliding estimate, then `IncrementBy`, 100,000 per second) " +
			"with cellrate's counter against its local counter. cellrate's stores are sized at 4 slots a key.",
			[]string{"stores"}, []string{"stores"}},
	}
}

func sections(w io.Writer, res results) {
	for _, s := range sectionSpecs(res) {
		if !slices.ContainsFunc(s.ids, func(id string) bool { return len(goroutineCountsOf(res, id)) > 0 }) {
			continue // a section whose groups did not run
		}
		fmt.Fprintf(w, "## %s\n\n%s\n\n", s.title, s.text)
		for _, c := range charts(res) {
			if slices.Contains(s.charts, strings.TrimSuffix(c.file, ".png")) {
				fmt.Fprintf(w, "![%s](%s)\n\n", c.title, c.file)
			}
		}
		for _, id := range s.ids {
			for _, g := range goroutineCountsOf(res, id) {
				gr, _ := res.find(id, g)
				fmt.Fprintf(w, "### %s (%s)\n\n", gr.Title, plural(g))
				table(w, gr)
			}
		}
	}
}

func goroutineCountsOf(res results, id string) []int {
	var gs []int
	for _, g := range res.Groups {
		if g.ID == id {
			gs = append(gs, g.G)
		}
	}
	return gs
}

func accuracyMD(w io.Writer, res results) {
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
		"Left out: %s, which waits instead of denying.\n\n", res.Config.Requests, blocking())
	fmt.Fprintf(w, "| limiter | schedule | admitted | exact | admitted/exact | excess |\n|---|---|--:|--:|--:|--:|\n")
	for _, a := range res.Acc {
		fmt.Fprintf(w, "| %s |\n", strings.Join(a.cells(), " | "))
	}
	fmt.Fprintln(w)
}

// text writes the comparisons to standard output, one line each.
func text(w io.Writer, res results) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, g := range res.Groups {
		fmt.Fprintf(tw, "%s g=%d\t\t\t\n", g.ID, g.G)
		for _, r := range sorted(g) {
			e, _ := estimate(g.Kind, r)
			fmt.Fprintf(tw, "  %s\t%s\t%s\t\n", r.Label, fmtEst(g.Kind, e), verdict(g.Kind, e))
		}
	}
	tw.Flush()
}

// The README's figures block lies between these markers; figures.md is
// what goes between them.
const (
	beginMarker = "<!-- figures: generated by make bench from bench/report; do not edit -->\n"
	endMarker   = "<!-- end of figures -->\n"
)

// splice returns readme with the text between the markers replaced by
// fig.
func splice(readme, fig []byte) ([]byte, error) {
	i := bytes.Index(readme, []byte(beginMarker))
	j := bytes.Index(readme, []byte(endMarker))
	if i < 0 || j < i {
		return nil, errors.New("no figures block (the begin and end markers, in order)")
	}
	out := slices.Clone(readme[:i+len(beginMarker)])
	out = append(out, fig...)
	return append(out, readme[j:]...), nil
}

// block returns the text between readme's markers.
func block(readme []byte) ([]byte, bool) {
	i := bytes.Index(readme, []byte(beginMarker))
	j := bytes.Index(readme, []byte(endMarker))
	if i < 0 || j < i {
		return nil, false
	}
	return readme[i+len(beginMarker) : j], true
}

// figures writes the README's figures block: the charts and the
// headline comparisons, on one goroutine, each with its interval.
func figures(w io.Writer, res results) {
	m := res.Machine
	interval := fmt.Sprintf("its %.0f%% interval", 100*level)
	if p := res.Config.Procs; p > 1 {
		interval = fmt.Sprintf("the %.0f%% interval a rerun lands in (from %d processes)", 100*level, p)
	}
	fmt.Fprintf(w, "\nWritten by `make bench` from [bench/report](bench/report/README.md) (%s, %s/%s, %s, %d CPUs, %s; load average %s before, %s after): "+
		"each figure is a paired comparison (ours and the baseline in alternating turns, timed by CPU time) with %s. "+
		"The report has every peer, both goroutine counts, injected time and the method.\n\n",
		m.Date, m.OS, m.Arch, m.CPU, m.CPUs, m.Go, m.LoadBefore, m.LoadAfter, interval)
	for _, c := range charts(res) {
		if c.readme {
			fmt.Fprintf(w, "![%s](bench/report/%s)\n\n", c.title, c.file)
		}
	}
	fmt.Fprintf(w, "| comparison, 1 goroutine | times faster, or ns added (95%% interval) | verdict |\n|---|--:|---|\n")
	pick := []struct {
		id, suffix string
		keep       func(string) bool
	}{
		{"limiters/admit", ", admitting, vs x/time/rate", ours},
		{"limiters/deny", ", denying, vs x/time/rate", ours},
	}
	for _, n := range res.Config.KeyCounts {
		pick = append(pick, struct {
			id, suffix string
			keep       func(string) bool
		}{fmt.Sprintf("keyed/%d", n), ", " + thousands(n) + " keys", all})
	}
	for _, n := range []int{10, 100_000} {
		pick = append(pick, struct {
			id, suffix string
			keep       func(string) bool
		}{fmt.Sprintf("http/%d/added", n), fmt.Sprintf(", %s clients, added to a request", thousands(n)), func(l string) bool { return l == labelOf("httplimit") }},
			struct {
				id, suffix string
				keep       func(string) bool
			}{fmt.Sprintf("http/%d", n), fmt.Sprintf(", %s clients", thousands(n)), all})
	}
	for _, p := range pick {
		g, ok := res.find(p.id, 1)
		if !ok {
			continue
		}
		for _, r := range sorted(g) {
			if !p.keep(r.Label) {
				continue
			}
			e, _ := estimate(g.Kind, r)
			what := r.Label
			if strings.HasPrefix(what, "vs ") {
				what = subject(p.id) + " " + what
			}
			fmt.Fprintf(w, "| %s%s | %s | %s |\n", what, p.suffix, fmtEst(g.Kind, e), verdict(g.Kind, e))
		}
	}
	fmt.Fprintln(w)
	if res.Conc != nil {
		res.Conc.figures(w)
	}
}

// subject is what a group's "vs" rows compare.
func subject(id string) string {
	if strings.HasPrefix(id, "http") {
		return labelOf("httplimit")
	}
	return labelOf("keyed")
}

func ours(l string) bool { return strings.HasPrefix(l, "cellrate") }
func all(string) bool    { return true }
