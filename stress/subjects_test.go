package stress

import (
	"math/big"
	"time"

	"github.com/cellrate/cellrate/bucket"
	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/packed64"
	"github.com/cellrate/cellrate/step"
	"github.com/cellrate/cellrate/striped"
	"github.com/cellrate/cellrate/window"
)

// must returns v, or panics with err: the subjects' parameters are fixed.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// windowSubject: a sliding-window counter counts every unit in the fixed
// window holding the time the caller passed, at most limit per window, and
// its windows never overlap, so any interval T of given times, in any
// order, meets at most T/W + 2 of them: Burst 2*limit, Rate limit/W.
func windowSubject(name string, lim int64, w time.Duration) Subject {
	p := must(window.NewParams(lim, w))
	return Subject{
		Name: name,
		New: func() limit.Limiter {
			return must(window.New(lim, w))
		},
		MaxN: lim, Burst: 2 * lim, Rate: RatePer(lim, w), GivenTimes: true, Window: w,
		Init: window.State{},
		Step: func(s any, now, n int64) (any, limit.Result, error) { return p.Step(s.(window.State), now, n) },
	}
}

func init() {
	subjects = append(subjects,
		windowSubject("window-1-per-1ns", 1, 1),
		windowSubject("window-1000-per-1s", 1000, time.Second),
		windowSubject("window-max-per-292y", window.MaxLimit, time.Duration(1<<63-1)),
		windowSubject("window-7-per-3s", 7, 3*time.Second),
	)
}

// gcraSubject: GCRA promises Burst + Rate*T over any interval of the
// times it is given, in any order.
func gcraSubject(name string, events int64, period time.Duration, burst int64) Subject {
	p := must(step.NewGCRA(events, period, burst))
	return Subject{
		Name: name,
		New: func() limit.Limiter {
			return must(gcra.New(events, period, burst))
		},
		MaxN: burst, Burst: burst, Rate: RatePer(events, period), GivenTimes: true,
		Init: step.GCRAState(0),
		Step: func(s any, now, n int64) (any, limit.Result, error) { return p.Step(s.(step.GCRAState), now, n) },
	}
}

func init() {
	subjects = append(subjects,
		gcraSubject("gcra-1-per-1ns", 1, 1, 1),
		gcraSubject("gcra-1000-per-1s-burst-50", 1000, time.Second, 50),
		gcraSubject("gcra-3-per-1s-burst-7", 3, time.Second, 7),
		gcraSubject("gcra-1-per-146y", 1, time.Duration(1<<62), 1),
	)
}

// packedBucketSubject: packed64 documents at most burst + (T + u)/period
// tokens over any interval T of the times callers pass, in any order, u
// being the word's time unit.
func packedBucketSubject(name string, events int64, period time.Duration, burst int64) Subject {
	p := must(step.NewPackedBucket(events, period, burst))
	rate := RatePer(events, period)
	return Subject{
		Name: name,
		New: func() limit.Limiter {
			return must(packed64.NewBucket(events, period, burst))
		},
		MaxN: burst, Burst: burst, Rate: rate, GivenTimes: true,
		Extra: new(big.Rat).Mul(rate, big.NewRat(int64(p.Unit()), 1)),
		Init:  step.PackedBucketState{},
		Step: func(s any, now, n int64) (any, limit.Result, error) {
			return p.Step(s.(step.PackedBucketState), now, n)
		},
	}
}

// packedWindowSubject: like window's in whole units, over the rounded
// window of wu units (at least w, which only admits less): given times
// rounded down to units make an interval T at most T/u + 1 units long, so
// the bound gains limit/wu.
func packedWindowSubject(name string, lim int64, w time.Duration) Subject {
	p := must(step.NewPackedWindow(lim, w))
	wu := int64(p.Window() / p.Unit())
	return Subject{
		Name: name,
		New: func() limit.Limiter {
			return must(packed64.NewWindow(lim, w))
		},
		MaxN: lim, Burst: 2 * lim, Rate: RatePer(lim, w), GivenTimes: true, Window: p.Window(),
		Extra: big.NewRat(lim, wu),
		Init:  step.PackedWindowState{},
		Step: func(s any, now, n int64) (any, limit.Result, error) {
			return p.Step(s.(step.PackedWindowState), now, n)
		},
	}
}

func init() {
	subjects = append(subjects,
		packedBucketSubject("packed64-bucket-1-per-256ns", 1, 256, 1),
		packedBucketSubject("packed64-bucket-1000-per-1s-burst-50", 1000, time.Second, 50),
		packedBucketSubject("packed64-bucket-3-per-1s-burst-7", 3, time.Second, 7),
		packedBucketSubject("packed64-bucket-max-burst", 1, time.Hour, step.MaxPackedBurst),
		packedBucketSubject("packed64-bucket-1-per-1m-burst-3", 1, time.Minute, 3), // a token is 3662109.375 units
		packedWindowSubject("packed64-window-1-per-1ns", 1, 1),
		packedWindowSubject("packed64-window-1000-per-1s", 1000, time.Second),
		packedWindowSubject("packed64-window-max", step.MaxPackedWindowLimit, step.MaxPackedWindow),
	)
}

// bucketSubject: the bucket promises Burst + Rate*T exactly over any
// interval of the times it is given.
func bucketSubject(name string, events int64, period time.Duration, burst int64) Subject {
	p := must(step.NewBucket(events, period, burst))
	return Subject{
		Name: name,
		New:  func() limit.Limiter { return must(bucket.New(events, period, burst)) },
		MaxN: burst, Burst: burst, Rate: RatePer(events, period), GivenTimes: true,
		Init: step.BucketState{},
		Step: func(s any, now, n int64) (any, limit.Result, error) { return p.Step(s.(step.BucketState), now, n) },
	}
}

// stripedSubject: the sharded limiter promises what the bucket does, with
// tokens cached per P in batches.
func stripedSubject(name string, events int64, period time.Duration, burst, batch int64) Subject {
	return Subject{
		Name: name,
		New: func() limit.Limiter {
			return must(striped.New(events, period, burst, striped.WithBatch(batch)))
		},
		MaxN: burst, Burst: burst, Rate: RatePer(events, period), GivenTimes: true,
	}
}

func init() {
	subjects = append(subjects,
		bucketSubject("bucket-1-per-1ns", 1, 1, 1),
		bucketSubject("bucket-1000-per-1s-burst-50", 1000, time.Second, 50),
		bucketSubject("bucket-3-per-1s-burst-7", 3, time.Second, 7),
		bucketSubject("bucket-1-per-73y", 1, time.Duration(1<<61), 1),
		bucketSubject("bucket-1e9-per-1s-burst-1e9", 1e9, time.Second, 1e9),
		stripedSubject("striped-1000-per-1s-burst-50-batch-8", 1000, time.Second, 50, 8),
		stripedSubject("striped-3-per-1s-burst-7-batch-1", 3, time.Second, 7, 1),
		stripedSubject("striped-1e6-per-1s-burst-1000-batch-64", 1_000_000, time.Second, 1000, 64),
	)
}
