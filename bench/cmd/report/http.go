package main

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/cellrate/cellrate/bench"
)

// The HTTP middleware section is not made of Go benchmarks: vegeta
// attacks real loopback servers (bench.RunHTTP), and the memory run drives
// ServeHTTP directly (bench.MeasureHTTPMemory). It runs after the
// benchmarks, unless -http=false or -in.

type httpResults struct {
	cfg  bench.HTTPConfig
	rows []bench.HTTPRow
	mem  []bench.HTTPMemory
}

func runHTTPSection(quick bool) (*httpResults, error) {
	h := &httpResults{cfg: bench.HTTPFull}
	if quick {
		h.cfg = bench.HTTPQuick
	}
	start := time.Now()
	var err error
	if h.rows, err = bench.RunHTTP(h.cfg); err != nil {
		return nil, err
	}
	if h.mem, err = bench.MeasureHTTPMemory(h.cfg.Memory); err != nil {
		return nil, err
	}
	log.Printf("HTTP middleware runs took %v", time.Since(start).Round(time.Second))
	return h, nil
}

// floor returns the row of no middleware in scenario sc.
func (h *httpResults) floor(sc string) bench.HTTPRow {
	for _, r := range h.rows {
		if r.Scenario == sc && r.Impl == "none" {
			return r
		}
	}
	return bench.HTTPRow{}
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/1e3) }

// cells returns a row's table cells: latency and added latency in µs,
// requests/s and its ratio to no middleware, admissions against the bound.
func (h *httpResults) cells(r bench.HTTPRow) []string {
	f := h.floor(r.Scenario)
	adm := fmt.Sprintf("%d/%d", r.Admitted, r.Sent)
	bound := "-"
	if r.Bound > 0 {
		bound = fmt.Sprintf("%d (%.3f)", r.Bound, float64(r.Admitted)/float64(r.Bound))
	}
	return []string{r.Impl, us(r.P50), us(r.P50 - f.P50), us(r.P99), us(r.P99 - f.P99),
		fmt.Sprintf("%.0f", r.MaxRate), fmt.Sprintf("%.2f", r.MaxRate/f.MaxRate), adm, bound}
}

var httpHeader = []string{"middleware", "p50 µs", "added p50", "p99 µs", "added p99", "max req/s", "vs none", "admitted/sent", "bound (admitted/bound)"}

func (h *httpResults) markdown(w io.Writer, chartExt string) {
	c := h.cfg
	fmt.Fprintf(w, "## HTTP middleware\n\n")
	fmt.Fprintf(w, "Each middleware sits in front of the same trivial handler on a real server on 127.0.0.1, with the keyed limit "+
		"(%d requests per %v per client, bursts of %d; a window of %v for window counters), naming clients by the address in "+
		"`X-Forwarded-For`, one address a request: httplimit through `ProxyKey` with loopback trusted (the rightmost untrusted address), "+
		"httprate through `LimitBy` with the last address canonicalized, sethvargo's `IPKeyFunc` (the whole header), "+
		"ulule's `TrustForwardHeader` (the first address: behind a real proxy, the client's own claim) and HoldUp the header as is. "+
		"[vegeta](https://github.com/tsenart/vegeta) v12.13.0 sends %d requests/s for %v (latency percentiles; *added* is over "+
		"the same server with no middleware, `none`), then as many as %d workers keep going for %v (max req/s). "+
		"`hot10`: 10 clients share the rate, twice their limit; *bound* is burst + rate × the attack's span for each, and "+
		"admitted/bound at most 1 means the limit held. `distinct`: each request from one of %d clients chosen at random, "+
		"every one of them decided on once before the attack. Median of %d round(s), middlewares in a rotated order each round; "+
		"the load generator and the servers share the machine's CPUs.\n\n",
		bench.KeyedEvents, bench.KeyedPeriod, bench.KeyedEvents, bench.KeyedPeriod, c.Rate, c.Duration, c.Workers, c.MaxDuration, c.Distinct, max(c.Rounds, 1))
	fmt.Fprintf(w, "![added latency per middleware](http.%s)\n\n", chartExt)
	line := func(cells []string) { fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | ")) }
	for _, sc := range []string{"hot10", "distinct"} {
		fmt.Fprintf(w, "### %s\n\n", sc)
		line(httpHeader)
		fmt.Fprintf(w, "|---|%s\n", strings.Repeat("--:|", len(httpHeader)-1))
		for _, r := range h.rows {
			if r.Scenario == sc {
				line(h.cells(r))
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "### memory\n\n")
	fmt.Fprintf(w, "Live heap after %d distinct clients, each decided on once through `ServeHTTP` (after a collection, less the heap before the middleware was made). "+
		"httplimit's table is fixed at 5/4 slots a client; `httplimit-64k` is its default table of 65536 slots, "+
		"whose clients' slots are taken over once they are idle (a full bucket), without loss.\n\n", c.Memory)
	line([]string{"middleware", "clients", "MiB", "bytes/client"})
	fmt.Fprintf(w, "|---|--:|--:|--:|\n")
	for _, m := range h.mem {
		line([]string{m.Impl, fmt.Sprint(m.Clients), fmt.Sprintf("%.1f", float64(m.Bytes)/(1<<20)), fmt.Sprintf("%.1f", float64(m.Bytes)/float64(m.Clients))})
	}
	fmt.Fprintln(w)
}

func (h *httpResults) text(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	line := func(cells []string) { fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t") }
	for _, sc := range []string{"hot10", "distinct"} {
		line(append([]string{"http/" + sc}, httpHeader[1:]...))
		for _, r := range h.rows {
			if r.Scenario == sc {
				line(h.cells(r))
			}
		}
		fmt.Fprintln(tw)
	}
	line([]string{"http/memory", "clients", "MiB", "bytes/client"})
	for _, m := range h.mem {
		line([]string{m.Impl, fmt.Sprint(m.Clients), fmt.Sprintf("%.1f", float64(m.Bytes)/(1<<20)), fmt.Sprintf("%.1f", float64(m.Bytes)/float64(m.Clients))})
	}
	tw.Flush()
}

// chart writes bars of added p50 and p99 latency per middleware, one
// panel per scenario.
func (h *httpResults) chart(file string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("chart %s: %v", file, p)
		}
	}()
	scs := []string{"hot10", "distinct"}
	grid := [][]*plot.Plot{make([]*plot.Plot, len(scs))}
	for i, sc := range scs {
		p := plot.New()
		p.Title.Text = sc
		p.Y.Label.Text = "added latency, µs"
		var names []string
		var p50, p99 plotter.Values
		f := h.floor(sc)
		for _, r := range h.rows {
			if r.Scenario == sc && r.Impl != "none" {
				names = append(names, r.Impl)
				p50 = append(p50, float64(r.P50-f.P50)/1e3)
				p99 = append(p99, float64(r.P99-f.P99)/1e3)
			}
		}
		w := vg.Points(12)
		b50, err := plotter.NewBarChart(p50, w)
		if err != nil {
			return err
		}
		b99, err := plotter.NewBarChart(p99, w)
		if err != nil {
			return err
		}
		b50.Color, b99.Color = palette[0], palette[1]
		b50.Offset, b99.Offset = -w/2, w/2
		p.Add(b50, b99)
		p.Legend.Add("p50", b50)
		p.Legend.Add("p99", b99)
		p.Legend.Top = true
		p.NominalX(names...)
		grid[0][i] = p
	}
	wd, ht := vg.Length(len(scs))*6*vg.Inch, 4*vg.Inch
	var img interface {
		vg.CanvasSizer
		io.WriterTo
	} = vgsvg.New(wd, ht)
	if filepath.Ext(file) == ".png" {
		img = vgimg.PngCanvas{Canvas: vgimg.New(wd, ht)}
	}
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(scs), PadX: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := plot.Align(grid, tiles, dc)
	for i, p := range grid[0] {
		p.Draw(canvases[0][i])
	}
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := img.WriteTo(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
