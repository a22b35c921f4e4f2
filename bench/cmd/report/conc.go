package main

import (
	"fmt"
	"io"
	"log"
	"strings"
	"time"

	"github.com/cellrate/cellrate/bench"
)

// The adaptive concurrency section is a test bed, not a comparison of
// cost: a real HTTP server on 127.0.0.1 with a fixed pool of workers,
// driven open-loop past its capacity, with each limit in front of it
// (bench.RunConcBed). It runs after the paired comparisons, unless
// -conc=false.

type concResults struct {
	Bed  bench.ConcBed   `json:"bed"`
	Rows []bench.ConcRow `json:"rows"`
}

func runConcSection(quick bool) (*concResults, error) {
	c := &concResults{Bed: bench.ConcReportBed}
	if quick {
		c.Bed = bench.ConcQuickBed
	}
	start := time.Now()
	var err error
	if c.Rows, err = bench.RunConcBed(c.Bed, bench.ConcImpls()); err != nil {
		return nil, err
	}
	log.Printf("adaptive concurrency bed took %v", time.Since(start).Round(time.Second))
	return c, nil
}

func (c *concResults) markdown(w io.Writer) {
	b := c.Bed
	fmt.Fprintf(w, "## Adaptive concurrency limits on a real server\n\n")
	fmt.Fprintf(w, "An HTTP server on 127.0.0.1 queues each request for one of %d workers that each take %v, so latency grows with the "+
		"requests in flight past %d (the optimum). Each limit guards the queue (a 503 at once when it refuses; a request slower than "+
		"twice the no-load latency is released as Dropped); a load generator in the same process sends requests open-loop at %s "+
		"the capacity for %v each, starting every adaptive limit at %d; each figure is the median of %d interleaved rounds. "+
		"Latencies are over no-load latency (client: the whole HTTP round trip; server: admission to the end of the work). "+
		"Host stalls on a shared machine read as queueing and move the tails: compare a row with the fixed limit's at the same load.\n\n",
		b.Workers, b.Service, b.Workers, loadsText(b.Loads), b.Run, b.Initial, max(1, b.Rounds))
	s, err := bench.FormatConcRows(c.Rows)
	if err != nil {
		return
	}
	fmt.Fprintf(w, "%s\n", s)
}

// figures writes the README's concurrency rows: each limit at the
// highest load.
func (c *concResults) figures(w io.Writer) {
	if len(c.Rows) == 0 {
		return
	}
	top := c.Bed.Loads[len(c.Bed.Loads)-1]
	r0 := c.Rows[0]
	fmt.Fprintf(w, "Adaptive concurrency at %.0fx overload (%d workers of %v on loopback, median of %d rounds; every load in the report):\n\n",
		top, r0.Workers, c.Bed.Service, max(1, c.Bed.Rounds))
	fmt.Fprintf(w, "| limit | converge | in flight / workers | p50, p99 / no-load (client) | server p99 / no-load | spread | goodput |\n|---|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range c.Rows {
		if r.Load != top {
			continue
		}
		conv := r.Converge.Round(10 * time.Millisecond).String()
		if !r.Converged {
			conv = "never"
		}
		nl := float64(r.NoLoad)
		fmt.Fprintf(w, "| %s | %s | %.2f | %.2f, %.2f | %.2f | ±%.0f%% | %.2f |\n", r.Limiter, conv, r.InFlight/float64(r.Workers),
			float64(r.P50)/nl, float64(r.P99)/nl, float64(r.SrvP99)/float64(r.SrvNoLoad), 100*r.Spread, r.Goodput)
	}
	fmt.Fprintln(w)
}

func loadsText(loads []float64) string {
	var s []string
	for _, l := range loads {
		s = append(s, fmt.Sprintf("%gx", l))
	}
	return strings.Join(s, ", ")
}
