package adaptive

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/cellrate/cellrate/bucket"
	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/rate"
)

// recorder is a Setter that keeps every rate set on it.
type recorder struct {
	mu    sync.Mutex
	rates []float64
	err   error
}

func (r *recorder) SetRateAt(_ int64, perSecond float64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	r.rates = append(r.rates, perSecond)
	return nil
}

func (r *recorder) last() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rates[len(r.rates)-1]
}

const iv = int64(time.Second)

func mustAIMD(t *testing.T, s Setter, opts ...Option) *AIMD {
	t.Helper()
	opts = append([]Option{WithClock(func() int64 { return 0 })}, opts...)
	a, err := NewAIMD(s, 100, 10, 200, 5, 0.5, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// interval records good and bad outcomes at i*iv: the first of them
// judges the interval before, if one has passed.
func interval(a *AIMD, i int64, good, bad int) {
	now := i * iv
	for range good {
		a.RecordAt(now, true)
	}
	for range bad {
		a.RecordAt(now, false)
	}
}

func TestAIMDIncreaseDecreaseClamp(t *testing.T) {
	r := &recorder{}
	a := mustAIMD(t, r)
	if r.last() != 100 || a.Rate() != 100 {
		t.Fatalf("initial rate not set: %v", r.rates)
	}
	interval(a, 0, 10, 0) // before the first interval ends: no judgement
	if a.Rate() != 100 {
		t.Fatalf("judged early: %v", a.Rate())
	}
	interval(a, 1, 1, 0) // judges [0, 1s): 11 good
	if a.Rate() != 105 {
		t.Fatalf("after a good interval: %v, want 105", a.Rate())
	}
	interval(a, 2, 0, 1) // judges the interval with one good: up again
	interval(a, 3, 0, 1) // judges one bad: halve
	if a.Rate() != 55 {
		t.Fatalf("after a bad interval: %v, want 55", a.Rate())
	}
	for i := int64(4); i < 10; i++ {
		interval(a, i, 0, 1)
	}
	if a.Rate() != 10 {
		t.Fatalf("decrease below min: %v", a.Rate())
	}
	for i := int64(10); i < 60; i++ {
		interval(a, i, 1, 0)
	}
	if a.Rate() != 200 {
		t.Fatalf("increase past max: %v", a.Rate())
	}
}

func TestAIMDHysteresis(t *testing.T) {
	a := mustAIMD(t, &recorder{}, WithHysteresis(3, 2))
	interval(a, 0, 0, 1)
	interval(a, 1, 1, 0) // judges bad #1
	if a.Rate() != 100 {
		t.Fatalf("one bad interval moved the rate to %v", a.Rate())
	}
	interval(a, 2, 0, 1) // judges good: resets the bad streak
	interval(a, 3, 0, 1) // bad #1
	interval(a, 4, 1, 0) // bad #2: halve
	if a.Rate() != 50 {
		t.Fatalf("two bad intervals in a row: %v, want 50", a.Rate())
	}
	interval(a, 5, 1, 0) // good #1
	interval(a, 6, 1, 0) // good #2
	if a.Rate() != 50 {
		t.Fatalf("two good intervals moved the rate to %v", a.Rate())
	}
	interval(a, 7, 1, 0) // good #3
	if a.Rate() != 55 {
		t.Fatalf("three good intervals: %v, want 55", a.Rate())
	}
}

func TestAIMDSmoothingAndTolerance(t *testing.T) {
	// alpha 0.5, tolerance 0.3: a clean interval then one at 50% failures
	// averages 0.25 (good); a second at 50% averages 0.375 (bad).
	a := mustAIMD(t, &recorder{}, WithSmoothing(0.5), WithTolerance(0.3))
	interval(a, 0, 10, 0)
	interval(a, 1, 5, 5) // judges the clean one: up to 105
	interval(a, 2, 5, 5) // judges 50%: ewma 0.25, up to 110
	if a.Rate() != 110 {
		t.Fatalf("smoothed 0.25 <= 0.3 should be good: %v", a.Rate())
	}
	interval(a, 3, 10, 0) // judges 50%: ewma 0.375, halve
	if a.Rate() != 55 {
		t.Fatalf("smoothed 0.375 > 0.3 should be bad: %v", a.Rate())
	}
	// Without smoothing the same first 50% interval is bad at once.
	b := mustAIMD(t, &recorder{}, WithTolerance(0.3))
	interval(b, 0, 5, 5)
	interval(b, 1, 1, 0)
	if b.Rate() != 50 {
		t.Fatalf("unsmoothed 0.5 > 0.3: %v", b.Rate())
	}
}

func TestAIMDLatencyThreshold(t *testing.T) {
	a := mustAIMD(t, &recorder{}, WithLatencyThreshold(100*time.Millisecond))
	a.ObserveAt(0, 100*time.Millisecond, true) // at the threshold: good
	a.ObserveAt(iv, 0, true)
	if a.Rate() != 105 {
		t.Fatalf("latency at the threshold judged bad: %v", a.Rate())
	}
	a.ObserveAt(iv, 101*time.Millisecond, true) // above: a failure
	a.ObserveAt(2*iv, 0, true)
	if a.Rate() != 52.5 {
		t.Fatalf("latency above the threshold judged good: %v", a.Rate())
	}
	if g, b := a.counts(); g != 3 || b != 1 {
		t.Fatalf("counts %d %d", g, b)
	}
}

func TestAIMDMinSamplesCarryOver(t *testing.T) {
	a := mustAIMD(t, &recorder{}, WithMinSamples(3))
	interval(a, 0, 0, 1)
	interval(a, 1, 1, 0) // judges 1 outcome: too few, carried
	if a.Rate() != 100 {
		t.Fatalf("judged with too few samples: %v", a.Rate())
	}
	interval(a, 2, 1, 0) // judges 2 outcomes: carried again
	if a.Rate() != 100 {
		t.Fatalf("judged with too few samples: %v", a.Rate())
	}
	interval(a, 3, 1, 0) // judges the 3: one bad
	if a.Rate() != 50 {
		t.Fatalf("carried failure lost: %v", a.Rate())
	}
}

func TestAIMDParams(t *testing.T) {
	r := &recorder{}
	bad := []struct {
		param string
		mk    func() (*AIMD, error)
	}{
		{"target", func() (*AIMD, error) { return NewAIMD(nil, 1, 1, 1, 1, 0.5) }},
		{"target", func() (*AIMD, error) { return NewAIMD((*gcra.Limiter)(nil), 1, 1, 1, 1, 0.5) }},
		{"target", func() (*AIMD, error) { return NewAIMD(Bucket(nil), 1, 1, 1, 1, 0.5) }},
		{"target", func() (*AIMD, error) { return NewAIMD(Rate(nil), 1, 1, 1, 1, 0.5) }},
		{"maxRate", func() (*AIMD, error) { return NewAIMD(r, 1, 1, math.Inf(1), 1, 0.5) }},
		{"minRate", func() (*AIMD, error) { return NewAIMD(r, 1, 0, 2, 1, 0.5) }},
		{"minRate", func() (*AIMD, error) { return NewAIMD(r, 1, 3, 2, 1, 0.5) }},
		{"initial", func() (*AIMD, error) { return NewAIMD(r, 3, 1, 2, 1, 0.5) }},
		{"initial", func() (*AIMD, error) { return NewAIMD(r, math.NaN(), 1, 2, 1, 0.5) }},
		{"increase", func() (*AIMD, error) { return NewAIMD(r, 1, 1, 2, 0, 0.5) }},
		{"decrease", func() (*AIMD, error) { return NewAIMD(r, 1, 1, 2, 1, 1) }},
		{"decrease", func() (*AIMD, error) { return NewAIMD(r, 1, 1, 2, 1, 0) }},
		{"interval", func() (*AIMD, error) { return NewAIMD(r, 1, 1, 2, 1, 0.5, WithInterval(0)) }},
		{"hysteresis", func() (*AIMD, error) { return NewAIMD(r, 1, 1, 2, 1, 0.5, WithHysteresis(1, 0)) }},
		{"smoothing", func() (*AIMD, error) { return NewAIMD(r, 1, 1, 2, 1, 0.5, WithSmoothing(0)) }},
		{"tolerance", func() (*AIMD, error) { return NewAIMD(r, 1, 1, 2, 1, 0.5, WithTolerance(1)) }},
		{"latencyThreshold", func() (*AIMD, error) { return NewAIMD(r, 1, 1, 2, 1, 0.5, WithLatencyThreshold(-1)) }},
		{"minSamples", func() (*AIMD, error) { return NewAIMD(r, 1, 1, 2, 1, 0.5, WithMinSamples(0)) }},
		{"clock", func() (*AIMD, error) { return NewAIMD(r, 1, 1, 2, 1, 0.5, WithClock(nil)) }},
	}
	for _, b := range bad {
		a, err := b.mk()
		var pe *limit.ParamError
		if a != nil || !errors.As(err, &pe) || pe.Param != b.param || pe.Pkg != "adaptive" {
			t.Errorf("%s: got %v, %v", b.param, a, err)
		}
	}
	r.err = errors.New("refused")
	if _, err := NewAIMD(r, 1, 1, 2, 1, 0.5); err != r.err {
		t.Fatalf("the target's error for initial: %v", err)
	}
}

// TestOptionsBelongToOneConstructor: an option of the other constructor, or
// a nil one, is a *limit.ParamError naming its index; WithClock fits both.
func TestOptionsBelongToOneConstructor(t *testing.T) {
	r := &recorder{}
	clock := WithClock(func() int64 { return 0 })
	for name, mk := range map[string]func() (any, error){
		"NewAIMD WithBuckets": func() (any, error) { return NewAIMD(r, 1, 1, 2, 1, 0.5, clock, WithBuckets(2)) },
		"NewAIMD WithRand":    func() (any, error) { return NewAIMD(r, 1, 1, 2, 1, 0.5, clock, WithRand(nil)) },
		"NewAIMD nil":         func() (any, error) { return NewAIMD(r, 1, 1, 2, 1, 0.5, clock, nil) },
		"New WithInterval":    func() (any, error) { return New(2, time.Second, clock, WithInterval(time.Second)) },
		"New WithMinSamples":  func() (any, error) { return New(2, time.Second, clock, WithMinSamples(1)) },
		"New nil":             func() (any, error) { return New(2, time.Second, clock, nil) },
	} {
		v, err := mk()
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Param != "option" || pe.Value != 1 || pe.Pkg != "adaptive" {
			t.Errorf("%s: got %v, %v", name, v, err)
		}
	}
	if _, err := NewAIMD(r, 1, 1, 2, 1, 0.5, clock); err != nil {
		t.Fatalf("WithClock for an AIMD: %v", err)
	}
	if _, err := New(2, time.Second, clock); err != nil {
		t.Fatalf("WithClock for a Throttle: %v", err)
	}
}

func TestAIMDTargetErrorKeepsRate(t *testing.T) {
	r := &recorder{}
	a := mustAIMD(t, r)
	r.err = errors.New("refused")
	interval(a, 0, 1, 0)
	a.RecordAt(iv, true) // judges the interval: a fall the target refuses
	if a.Rate() != 100 || a.Err() != r.err {
		t.Fatalf("rate %v, err %v after a refused set", a.Rate(), a.Err())
	}
}

func TestAIMDZeroValue(t *testing.T) {
	var a AIMD
	a.Record(true)
	a.RecordAt(5, false)
	a.Observe(time.Second, true)
	if a.Rate() != 0 {
		t.Fatal("zero AIMD has a rate")
	}
	if err := a.Err(); !errors.Is(err, ErrZeroAIMD) {
		t.Fatalf("Err on zero: %v", err)
	}
}

// TestAIMDConcurrent records from many goroutines across many intervals:
// no outcome is lost, and the target sees rates only from the AIMD's steps.
func TestAIMDConcurrent(t *testing.T) {
	r := &recorder{}
	a := mustAIMD(t, r, WithInterval(time.Millisecond))
	const workers, per = 8, 2000
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				a.RecordAt(int64(i)*int64(time.Microsecond)*10, (i+g)%5 != 0)
			}
		}()
	}
	wg.Wait()
	if g, b := a.counts(); g+b != workers*per || b != workers*per/5 {
		t.Fatalf("counts %d + %d, want %d with %d bad", g, b, workers*per, workers*per/5)
	}
	for _, v := range r.rates {
		if v < 10 || v > 200 {
			t.Fatalf("rate %v outside [10, 200]", v)
		}
	}
	if len(r.rates) < 2 {
		t.Fatal("never judged")
	}
}

func TestAIMDRecordAllocs(t *testing.T) {
	a := mustAIMD(t, &recorder{})
	a.RecordAt(0, true)
	if n := testing.AllocsPerRun(100, func() { a.RecordAt(1, true) }); n != 0 {
		t.Fatalf("RecordAt allocates %v", n)
	}
}

func TestAIMDDrivesBucketAndRate(t *testing.T) {
	b, err := bucket.New(100, time.Second, 10)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAIMD(Bucket(b), 50, 1, 100, 10, 0.5, WithClock(func() int64 { return 0 }))
	if err != nil {
		t.Fatal(err)
	}
	if burst, wait := bucketRate(b, 1<<40); burst != 10 || wait != time.Second/50 {
		t.Fatalf("bucket of burst %d, a token each %v, want 10 and 50/s", burst, wait)
	}
	a.RecordAt(0, false)
	a.RecordAt(iv, true)
	if burst, wait := bucketRate(b, 1<<41); burst != 10 || wait != time.Second/25 {
		t.Fatalf("bucket of burst %d, a token each %v, want 10 and 25/s", burst, wait)
	}
	rl := rate.NewLimiter(5, 1)
	a2, err := NewAIMD(Rate(rl), 8, 1, 100, 2, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if rl.Limit() != 8 {
		t.Fatalf("rate limiter at %v, want 8", rl.Limit())
	}
	_ = a2
}

func TestAIMDDrivesGCRA(t *testing.T) {
	g, err := gcra.New(100, time.Second, 10)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAIMD(g, 50, 1, 100, 10, 0.5, WithClock(func() int64 { return 0 }))
	if err != nil {
		t.Fatal(err)
	}
	a.RecordAt(0, false)
	a.RecordAt(iv, true) // 25/s from iv on
	if a.Rate() != 25 {
		t.Fatalf("AIMD at %v/s, want 25", a.Rate())
	}
	// An hour later, drained, it admits one event per 40ms, its burst of
	// 10 kept.
	now, ms := iv+int64(time.Hour), int64(time.Millisecond)
	n := 0
	for ; g.AllowAt(now); n++ {
	}
	if n != 10 || g.AllowAt(now+40*ms-1) || !g.AllowAt(now+40*ms) {
		t.Fatalf("not 25/s with burst 10 after the decrease (%d at once)", n)
	}
	if _, err := NewAIMD(g, 2e9, 1, 4e9, 1, 0.5); err == nil {
		t.Fatal("a rate above one event per ns was set")
	}
}

// bucketRate reads a bucket's burst and rate from what it does at now, long
// after any decision before: it is full, so it admits its burst at once,
// and then the next token comes after one token's refill time.
func bucketRate(b *bucket.Limiter, now int64) (burst int64, each time.Duration) {
	full, _ := b.AllowNAt(now, 0)
	b.AllowNAt(now, full.Remaining)
	next, _ := b.AllowNAt(now, 1)
	return full.Remaining, next.RetryAfter
}
