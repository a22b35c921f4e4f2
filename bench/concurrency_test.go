package bench

import (
	"os"
	"testing"
	"time"

	"github.com/platinummonkey/go-concurrency-limits/core"
	gcllimit "github.com/platinummonkey/go-concurrency-limits/limit"

	"github.com/cellrate/cellrate/concurrency"
)

// TestConcBedSmall runs the bed at a small size (3x overload, about a
// second per limiter) and holds cellrate's limiters to loose bounds a
// shared CI machine keeps: the steady in-flight count within 30% of the
// optimum, p99 within 3x the no-load latency, most of the capacity served.
func TestConcBedSmall(t *testing.T) {
	bed := ConcBed{Workers: 8, Service: 20 * time.Millisecond, Loads: []float64{3}, Run: 1500 * time.Millisecond,
		Initial: 2, Sample: 2 * time.Millisecond}
	var impls []ConcImpl
	for _, im := range ConcImpls() {
		if len(im.Name) > 8 && im.Name[:8] == "cellrate" || im.Name == "fixed at the optimum" {
			impls = append(impls, im)
		}
	}
	rows, err := RunConcBed(bed, impls)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := FormatConcRows(rows)
	t.Log("\n" + s)
	for _, r := range rows {
		w := float64(r.Workers)
		if r.InFlight < 0.7*w || r.InFlight > 1.3*w {
			t.Errorf("%s: %.1f in flight, optimum %d", r.Limiter, r.InFlight, r.Workers)
		}
		if r.P99 > 3*r.NoLoad {
			t.Errorf("%s: p99 %v, no-load %v", r.Limiter, r.P99, r.NoLoad)
		}
		if r.Goodput < 0.6 {
			t.Errorf("%s: goodput %.2f of capacity", r.Limiter, r.Goodput)
		}
	}
}

// TestConcBedFull prints the full-size table; set CELLRATE_CONC_BED=1.
func TestConcBedFull(t *testing.T) {
	if os.Getenv("CELLRATE_CONC_BED") == "" {
		t.Skip("set CELLRATE_CONC_BED=1 to run the full-size bed (about 4 minutes)")
	}
	s, err := ConcurrencyReport()
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + s)
}

// BenchmarkConcAcquireRelease: one admission and its release as Success,
// from all Ps at once, under a limit too high to refuse (each library's
// Vegas with the bed's windows, so its updates run as they would).
func BenchmarkConcAcquireRelease(b *testing.B) {
	bed := ConcBed{Initial: 1 << 16}
	cases := []struct {
		name string
		g    func() (concGuard, error)
	}{
		{"cellrate-Vegas", func() (concGuard, error) {
			return newOurs(&concurrency.Vegas{})(bed, 0)
		}},
		{"port-Vegas", func() (concGuard, error) {
			return newPort(func(initial int) core.Limit {
				return gcllimit.NewDefaultVegasLimitWithLimit("vegas", initial, nil, core.EmptyMetricRegistryInstance)
			})(bed, 0)
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			g, err := c.g()
			if err != nil {
				b.Fatal(err)
			}
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					rel, ok := g.acquire()
					if !ok {
						b.Fatal("refused")
					}
					rel(false)
				}
			})
		})
	}
}
