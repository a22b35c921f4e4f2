package bench

import (
	"context"
	"time"

	"github.com/platinummonkey/go-concurrency-limits/core"
	gcllimit "github.com/platinummonkey/go-concurrency-limits/limit"
	gcllimiter "github.com/platinummonkey/go-concurrency-limits/limiter"
	gclstrategy "github.com/platinummonkey/go-concurrency-limits/strategy"

	"github.com/cellrate/cellrate/concurrency"
)

// ours guards the bed with a concurrency.Limiter.
type concOurs struct{ l *concurrency.Limiter }

func (o concOurs) acquire() (func(bool), bool) {
	t, ok := o.l.TryAcquire()
	if !ok {
		return nil, false
	}
	return func(drop bool) {
		if drop {
			t.Release(concurrency.Dropped)
		} else {
			t.Release(concurrency.Success)
		}
	}, true
}

func (o concOurs) limit() int { return o.l.Limit() }

// bedWindow is the sampling window every adaptive limiter gets on the bed:
// at least 10 samples and twice the mean latency, between 1ms and 1s.
const bedWindowMin, bedWindowMax, bedWindowN = time.Millisecond, time.Second, 10

func newOurs(alg concurrency.Option) func(ConcBed, time.Duration) (concGuard, error) {
	return func(bed ConcBed, _ time.Duration) (concGuard, error) {
		l, err := concurrency.New(alg, concurrency.WithLimits(bed.Initial, 1, max(1000, bed.Initial)),
			concurrency.WithWindow(bedWindowMin, bedWindowMax, bedWindowN))
		return concOurs{l}, err
	}
}

// port guards the bed with github.com/platinummonkey/go-concurrency-limits.
type concPort struct{ l *gcllimiter.DefaultLimiter }

func (p concPort) acquire() (func(bool), bool) {
	ls, ok := p.l.Acquire(context.Background())
	if !ok {
		return nil, false
	}
	return func(drop bool) {
		if drop {
			ls.OnDropped()
		} else {
			ls.OnSuccess()
		}
	}, true
}

func (p concPort) limit() int { return p.l.EstimatedLimit() }

func newPort(mk func(initial int) core.Limit) func(ConcBed, time.Duration) (concGuard, error) {
	return func(bed ConcBed, _ time.Duration) (concGuard, error) {
		l, err := gcllimiter.NewDefaultLimiter(mk(bed.Initial), int64(bedWindowMin), int64(bedWindowMax),
			int64(100*time.Microsecond), bedWindowN, gclstrategy.NewSimpleStrategy(bed.Initial), nil, core.EmptyMetricRegistryInstance)
		return concPort{l}, err
	}
}

// ConcImpls returns the limiters the bed compares: a fixed limit at the
// optimum (the bulkhead sized by someone who knows it), cellrate's Vegas,
// Gradient and AIMD (with a threshold of 1.1 times the no-load latency),
// and the Go port's Vegas, Gradient2 and AIMD with their defaults.
func ConcImpls() []ConcImpl {
	return []ConcImpl{
		{"fixed at the optimum", func(bed ConcBed, _ time.Duration) (concGuard, error) {
			l, err := concurrency.NewFixed(bed.Workers)
			return concOurs{l}, err
		}},
		{"cellrate Vegas", func(bed ConcBed, nl time.Duration) (concGuard, error) {
			return newOurs(concurrency.WithVegas(0, 0))(bed, nl)
		}},
		{"cellrate Gradient", func(bed ConcBed, nl time.Duration) (concGuard, error) {
			return newOurs(concurrency.WithGradient(0, 0))(bed, nl)
		}},
		{"cellrate AIMD", func(bed ConcBed, nl time.Duration) (concGuard, error) {
			return newOurs(concurrency.WithAIMD(0, nl*11/10))(bed, nl)
		}},
		{"go-concurrency-limits Vegas", newPort(func(initial int) core.Limit {
			return gcllimit.NewDefaultVegasLimitWithLimit("vegas", initial, nil, core.EmptyMetricRegistryInstance)
		})},
		{"go-concurrency-limits Gradient2", newPort(func(initial int) core.Limit {
			l, _ := gcllimit.NewGradient2Limit("gradient2", initial, 1000, 1, func(int) int { return 4 }, 0.2, 600, nil, core.EmptyMetricRegistryInstance)
			return l
		})},
		{"go-concurrency-limits AIMD", newPort(func(initial int) core.Limit {
			return gcllimit.NewAIMDLimit("aimd", initial, 0.9, 1, core.EmptyMetricRegistryInstance)
		})},
	}
}

// ConcReportBed is the full-size bed for the bench report: every limiter
// at 0.5x, 1x, 1.5x and 3x, 3 interleaved rounds of 2.2 s runs (each
// run's second half is its steady state, long enough to show a limit that
// creeps up), about 3.2 minutes in all.
var ConcReportBed = ConcBed{Workers: 20, Service: 40 * time.Millisecond, Loads: []float64{0.5, 1, 1.5, 3},
	Run: 2200 * time.Millisecond, Initial: 10, Sample: 5 * time.Millisecond, Rounds: 3}

// ConcQuickBed is the bed of the quick report: 1x and 3x, one round of
// 1 s runs (about 15 s).
var ConcQuickBed = ConcBed{Workers: 20, Service: 40 * time.Millisecond, Loads: []float64{1, 3},
	Run: time.Second, Initial: 10, Sample: 5 * time.Millisecond, Rounds: 1}

// ConcurrencyReport runs the full-size bed (about 3 minutes) and returns
// its table in Markdown.
func ConcurrencyReport() (string, error) {
	rows, err := RunConcBed(ConcReportBed, ConcImpls())
	if err != nil {
		return "", err
	}
	return FormatConcRows(rows)
}
