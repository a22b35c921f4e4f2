package main

import (
	"strings"
	"testing"
	"time"

	"github.com/cellrate/cellrate/bench"
)

// TestConcSection: a report with the concurrency bed has its table with
// every row, and the README figures only the rows at the highest load.
func TestConcSection(t *testing.T) {
	res := synthetic()
	row := func(name string, load float64, p99 time.Duration) bench.ConcRow {
		return bench.ConcRow{Limiter: name, Load: load, Workers: 20, Converge: time.Second, Converged: true, InFlight: 20,
			Limit: 21, Spread: 0.05, P50: 41 * time.Millisecond, P99: p99, NoLoad: 40 * time.Millisecond,
			SrvP99: p99, SrvNoLoad: 40 * time.Millisecond, Goodput: 0.95}
	}
	res.Conc = &concResults{Bed: bench.ConcQuickBed, Rows: []bench.ConcRow{
		row("cellrate Vegas", 1, 50*time.Millisecond), row("cellrate Vegas", 3, 60*time.Millisecond),
		row("go-concurrency-limits Vegas", 1, 70*time.Millisecond), row("go-concurrency-limits Vegas", 3, 80*time.Millisecond),
	}}
	files, err := render(res)
	if err != nil {
		t.Fatal(err)
	}
	md, fig := string(files["README.md"]), string(files["figures.md"])
	if !strings.Contains(md, "## Adaptive concurrency limits on a real server") || strings.Count(md, "| cellrate Vegas |") != 2 {
		t.Errorf("report section:\n%s", md[strings.Index(md, "## Adaptive"):])
	}
	if !strings.Contains(fig, "| cellrate Vegas | 1s | 1.00 | 1.02, 1.50 | 1.50 | ±5% | 0.95 |") ||
		!strings.Contains(fig, "| go-concurrency-limits Vegas | 1s | 1.00 | 1.02, 2.00 | 2.00 |") || strings.Contains(fig, "1.25") {
		t.Errorf("README figures, want the 3x rows only:\n%s", fig)
	}
}
