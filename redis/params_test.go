package redis

import (
	"errors"
	"testing"
	"time"
)

// TestParamErrors: every refused parameter is a *limit.ParamError naming
// it, with the largest value that fits where there is one; the values at
// the limits are accepted.
func TestParamErrors(t *testing.T) {
	type mk func() error
	gcra := func(ev int64, per time.Duration, b int64, o ...Option) mk {
		return func() error { _, err := NewGCRA(offline, "", ev, per, b, o...); return err }
	}
	win := func(l int64, w time.Duration) mk {
		return func() error { _, err := NewWindow(offline, "", l, w); return err }
	}
	tt := func(ev int64, per time.Duration, b int64, o ...Option) mk {
		return func() error { _, err := NewTwoTier(offline, "", ev, per, b, o...); return err }
	}
	for _, tc := range []struct {
		name  string
		f     mk
		param string // "" = accepted
		max   any
	}{
		{"events 0", gcra(0, time.Second, 1), "events", nil},
		{"period 0", gcra(1, 0, 1), "period", nil},
		{"burst 0", gcra(1, time.Second, 0), "burst", nil},
		{"faster than 1/ns", gcra(2, time.Nanosecond, 1), "events", nil},
		{"burst span 2^48 steps", gcra(1, time.Millisecond, (1<<48-1)/1000000+1), "burst", int64((1<<48 - 1) / 1000000)},
		{"burst span at the limit", gcra(1, time.Millisecond, (1<<48-1)/1000000), "", nil},
		{"whole-ns interval, long period", gcra(1, 1<<47, 1), "", nil},
		{"fractional ratio past 48 bits", gcra(7, 1<<52+3, 1), "period", nil},
		{"grace negative", gcra(1, time.Second, 1, WithGrace(-1)), "grace", nil},
		{"timeout negative", gcra(1, time.Second, 1, WithTimeout(-1)), "timeout", nil},
		{"window limit 0", win(0, time.Second), "limit", int64(1<<32 - 1)},
		{"window limit 2^32", win(1<<32, time.Second), "limit", int64(1<<32 - 1)},
		{"window limit at the limit", win(1<<32-1, time.Second), "", nil},
		{"window 2^50 ns", win(1, 1<<50), "window", time.Duration(maxWindow)},
		{"window at the limit", win(1, maxWindow), "", nil},
		{"two-tier burst 1", tt(10, time.Second, 1), "burst", nil},
		{"two-tier lease refills the burst", tt(100, time.Second, 10, WithLease(100*time.Millisecond)), "burst", nil},
		{"two-tier lease just short", tt(100, time.Second, 11, WithLease(100*time.Millisecond), WithBatch(1)), "", nil},
		{"two-tier batch over the Redis burst", tt(100, time.Second, 11, WithLease(100*time.Millisecond), WithBatch(2)), "batch", int64(1)},
		{"two-tier burst 2^24", tt(1, time.Millisecond, 1<<24), "burst", int64(1<<24 - 1)},
		{"two-tier share 1.5", tt(10, time.Second, 100, WithFailOpen(1.5)), "share", 1.0},
		{"two-tier lease 0.5ms", tt(10, time.Second, 100, WithLease(time.Millisecond/2)), "lease", time.Hour},
	} {
		err := tc.f()
		if tc.param == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var pe *paramErr
		if !errors.As(err, &pe) || pe.Param != tc.param || pe.Pkg != "redis" {
			t.Errorf("%s: %v, want a ParamError for %s", tc.name, err, tc.param)
			continue
		}
		if tc.max != nil && pe.Max != tc.max {
			t.Errorf("%s: Max %v (%T), want %v", tc.name, pe.Max, pe.Max, tc.max)
		}
	}
}

// TestRetryAfter: the script's seconds and nanoseconds combine exactly,
// saturating at Never.
func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		s, ns int64
		want  time.Duration
	}{
		{0, 0, 0}, {0, 1, 1}, {1, -1, 999999999}, {-1, 2e9, 1e9}, {0, 5e15, 5e15},
		{9223372036, 854775807, never}, {9223372036, 854775806, never - 1}, {9223372036, 854775808, never},
		{9223372037, -145224193, never}, {9223372037, -145224194, never - 1}, {9223372037, -1, never},
		{1 << 40, 0, never}, {9223372038, -2e9, 9223372036e9},
	} {
		if got := retryAfter(tc.s, tc.ns); got != tc.want {
			t.Errorf("retryAfter(%d, %d) = %d, want %d", tc.s, tc.ns, got, tc.want)
		}
	}
}
