package bench

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/platinummonkey/go-concurrency-limits/core"
	gcllimit "github.com/platinummonkey/go-concurrency-limits/limit"

	"github.com/cellrate/cellrate/concurrency"
)

// TestConcBedSmall runs the bed at a small size (3x overload, 1.5s per
// limiter) and holds cellrate's limiters to bounds a loaded CI machine
// keeps but a broken limit does not (one that drifts up queues every
// request, one that collapses serves little): in flight within [0.6, 1.35]
// times the optimum, p50 within 1.4x the no-load latency (a stall moves
// the tail, not the median), server p99 within 5x, at least half the
// capacity served. Host stalls can push one run out of
// bounds, so each limiter gets up to 3 runs.
func TestConcBedSmall(t *testing.T) {
	bed := ConcBed{Workers: 8, Service: 20 * time.Millisecond, Loads: []float64{3}, Run: 1500 * time.Millisecond,
		Initial: 2, Sample: 2 * time.Millisecond}
	for _, im := range ConcImpls() {
		if !strings.HasPrefix(im.Name, "cellrate") {
			continue
		}
		var fails []string
		for range 3 {
			rows, err := RunConcBed(bed, []ConcImpl{im})
			if err != nil {
				t.Fatal(err)
			}
			s, _ := FormatConcRows(rows)
			t.Log("\n" + s)
			if fails = concBounds(rows[0]); len(fails) == 0 {
				break
			}
		}
		for _, f := range fails {
			t.Errorf("%s: %s", im.Name, f)
		}
	}
}

func concBounds(r ConcRow) []string {
	var fails []string
	w := float64(r.Workers)
	if r.InFlight < 0.6*w || r.InFlight > 1.35*w {
		fails = append(fails, fmt.Sprintf("%.1f in flight, optimum %d", r.InFlight, r.Workers))
	}
	if r.P50 > r.NoLoad*14/10 {
		fails = append(fails, fmt.Sprintf("p50 %v, no-load %v", r.P50, r.NoLoad))
	}
	if r.SrvP99 > 5*r.SrvNoLoad {
		fails = append(fails, fmt.Sprintf("server p99 %v, no-load %v", r.SrvP99, r.SrvNoLoad))
	}
	if r.Goodput < 0.5 {
		fails = append(fails, fmt.Sprintf("goodput %.2f of capacity", r.Goodput))
	}
	return fails
}

// TestConcBedFull prints the full-size table; set CELLRATE_CONC_BED=1.
func TestConcBedFull(t *testing.T) {
	if os.Getenv("CELLRATE_CONC_BED") == "" {
		t.Skip("set CELLRATE_CONC_BED=1 to run the full-size bed (about 3 minutes)")
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
			return newOurs(concurrency.WithVegas(0, 0))(bed, 0)
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

func TestMedianRows(t *testing.T) {
	mk := func(inflight float64, conv bool, p99 time.Duration) ConcRow {
		return ConcRow{Limiter: "x", InFlight: inflight, Converged: conv, P99: p99}
	}
	rounds := [][]ConcRow{
		{mk(1, true, 9*time.Second)},
		{mk(3, false, time.Second)},
		{mk(2, true, 2*time.Second)},
	}
	got := medianRows(rounds)[0]
	if got.InFlight != 2 || !got.Converged || got.P99 != 2*time.Second || got.Limiter != "x" {
		t.Fatalf("median row %+v", got)
	}
	// An even count: the mean of the middle two.
	got = medianRows(rounds[:2])[0]
	if got.InFlight != 2 || !got.Converged || got.P99 != 5*time.Second {
		t.Fatalf("median of two %+v", got)
	}
}
