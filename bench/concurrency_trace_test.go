package bench

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// traceGuard records a guard's limit and the drops released so far, once
// every 100ms of the bed's readings, to show what a limit did in a run.
type traceGuard struct {
	g     concGuard
	start time.Time
	drops atomic.Int64
	mu    sync.Mutex
	last  time.Duration
	trace []string
}

func (t *traceGuard) acquire() (func(bool), bool) {
	rel, ok := t.g.acquire()
	if !ok {
		return nil, false
	}
	return func(drop bool) {
		if drop {
			t.drops.Add(1)
		}
		rel(drop)
	}, true
}

func (t *traceGuard) limit() int {
	l := t.g.limit()
	t.mu.Lock()
	if at := time.Since(t.start); at-t.last >= 100*time.Millisecond {
		t.last = at
		t.trace = append(t.trace, fmt.Sprintf("%d/%d", l, t.drops.Load()))
	}
	t.mu.Unlock()
	return l
}

// TestConcBedTrace runs the report's bed for the limiters whose names match
// CELLRATE_CONC_TRACE (a regexp) at the loads in CELLRATE_CONC_LOADS (for
// example 1.5,3,1.5,3), one round, and logs each run's row and its limit
// and cumulative drops every 100ms (limit/drops): a burst of drops at a
// limit at or below the workers is a stall of the host, not a queue.
func TestConcBedTrace(t *testing.T) {
	re := os.Getenv("CELLRATE_CONC_TRACE")
	if re == "" {
		t.Skip("set CELLRATE_CONC_TRACE=regexp (and CELLRATE_CONC_LOADS=1.5,3) to trace limits on the bed")
	}
	bed := ConcReportBed
	bed.Rounds, bed.Loads = 1, nil
	for _, f := range strings.Split(os.Getenv("CELLRATE_CONC_LOADS"), ",") {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatalf("CELLRATE_CONC_LOADS: %v", err)
		}
		bed.Loads = append(bed.Loads, x)
	}
	var impls []ConcImpl
	for _, im := range ConcImpls() {
		if !regexp.MustCompile(re).MatchString(im.Name) {
			continue
		}
		impls = append(impls, ConcImpl{im.Name, func(b ConcBed, nl time.Duration) (concGuard, error) {
			g, err := im.New(b, nl)
			tg := &traceGuard{g: g, start: time.Now()}
			t.Cleanup(func() { t.Logf("%s: %s", im.Name, strings.Join(tg.trace, " ")) })
			return tg, err
		}})
	}
	rows, err := RunConcBed(bed, impls)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := FormatConcRows(rows)
	t.Log("\n" + s)
}
