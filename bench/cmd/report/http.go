package main

import (
	"fmt"
	"io"
	"log"
	"strings"
	"time"

	"github.com/cellrate/cellrate/bench"
)

// The sections over real connections are not comparisons of cost: vegeta
// attacks real loopback servers (bench.RunHTTP) to count what each
// middleware admits against its bound, and the memory run drives
// ServeHTTP directly (bench.MeasureHTTPMemory). They run after the paired
// comparisons, unless -http=false.

type httpResults struct {
	Cfg  bench.HTTPConfig   `json:"config"`
	Rows []bench.HTTPRow    `json:"rows"`
	Mem  []bench.HTTPMemory `json:"memory"`
}

func runHTTPSection(quick bool) (*httpResults, error) {
	h := &httpResults{Cfg: bench.HTTPFull}
	if quick {
		h.Cfg = bench.HTTPQuick
	}
	start := time.Now()
	var err error
	if h.Rows, err = bench.RunHTTP(h.Cfg); err != nil {
		return nil, err
	}
	if h.Mem, err = bench.MeasureHTTPMemory(h.Cfg.Memory); err != nil {
		return nil, err
	}
	log.Printf("HTTP over loopback and memory took %v", time.Since(start).Round(time.Second))
	return h, nil
}

func (h *httpResults) markdown(w io.Writer) {
	c := h.Cfg
	line := func(cells ...string) { fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | ")) }
	fmt.Fprintf(w, "## HTTP middleware over real connections: what each admits\n\n")
	fmt.Fprintf(w, "Each middleware sits in front of the same trivial handler on a real server on 127.0.0.1 with the keyed limit "+
		"(%d requests per %v per client, bursts of %d; a window of %v for window counters), naming clients by the address in "+
		"`X-Forwarded-For`: httplimit through `clientkey.Proxy` with loopback trusted (the rightmost untrusted address), "+
		"go-chi/httprate through `LimitBy` with the last address canonicalized, sethvargo's `IPKeyFunc` (the whole header), "+
		"ulule's `TrustForwardHeader` (the first address: behind a real proxy, the client's own claim) and HoldUp the header as is. "+
		"[vegeta](https://github.com/tsenart/vegeta) v12.13.0 sends %d requests/s for %v from 10 clients, twice their limit between them. "+
		"*bound* is burst + rate × the attack's span for each client; admitted/bound at most 1 means the limit held. "+
		"Latency and throughput over loopback are not reported: the load generator shares the process and the CPUs, so they cannot be paired; "+
		"the in-process comparisons above measure the cost.\n\n",
		bench.KeyedEvents, bench.KeyedPeriod, bench.KeyedEvents, bench.KeyedPeriod, c.Rate, c.Duration)
	line("middleware", "admitted/sent", "bound", "admitted/bound")
	fmt.Fprintf(w, "|---|--:|--:|--:|\n")
	for _, r := range h.Rows {
		if r.Bound > 0 {
			line(labelOf(r.Impl), fmt.Sprintf("%d/%d", r.Admitted, r.Sent), fmt.Sprint(r.Bound), fmt.Sprintf("%.3f", float64(r.Admitted)/float64(r.Bound)))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "## Memory\n\n")
	fmt.Fprintf(w, "Live heap after %s distinct clients, each decided on once through `ServeHTTP` (after a collection, less the heap before the middleware was made). "+
		"httplimit's table is sized at 5/4 slots a client; *httplimit, default table* has 65,536 slots, "+
		"whose clients' slots are taken over once they are idle (a full bucket), without loss.\n\n", thousands(c.Memory))
	line("middleware", "clients", "MiB", "bytes/client")
	fmt.Fprintf(w, "|---|--:|--:|--:|\n")
	for _, m := range h.Mem {
		line(memLabel(m.Impl), thousands(m.Clients), fmt.Sprintf("%.1f", float64(m.Bytes)/(1<<20)), fmt.Sprintf("%.1f", float64(m.Bytes)/float64(m.Clients)))
	}
	fmt.Fprintln(w)
}

func memLabel(name string) string {
	if name == "httplimit-64k" {
		return "cellrate httplimit, default table"
	}
	return labelOf(name)
}
