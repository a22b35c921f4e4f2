package limit

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestParamErrorMessage(t *testing.T) {
	for _, c := range []struct {
		e    ParamError
		want string
	}{
		{ParamError{Pkg: "gcra", Param: "burst", Value: int64(3), Min: int64(1), Max: int64(2)}, "gcra: burst 3 out of range [1, 2]"},
		{ParamError{Pkg: "window", Param: "window", Value: time.Duration(0), Min: time.Duration(1)}, "window: window 0s out of range (must be >= 1ns)"},
		{ParamError{Pkg: "bucket", Param: "rate", Value: 2e9, Max: 1e9}, "bucket: rate 2e+09 out of range (must be <= 1e+09)"},
		{ParamError{Pkg: "gcra", Param: "events", Value: int64(7), Min: int64(1), Max: int64(5), Reason: "the rate exceeds one event per nanosecond"},
			"gcra: events 7 out of range [1, 5]: the rate exceeds one event per nanosecond"},
		{ParamError{Pkg: "gcra", Param: "clock", Reason: "a nil clock"}, "gcra: clock <nil> out of range: a nil clock"},
		{ParamError{Pkg: "redis", Param: "prefix", Value: "app{rl}:", Reason: "braces"}, `redis: prefix "app{rl}:" out of range: braces`},
		{ParamError{Pkg: "httplimit", Param: "route", Value: ""}, `httplimit: route "" out of range`},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}

func TestParamErrorAs(t *testing.T) {
	var err error = &ParamError{Pkg: "gcra", Param: "burst", Value: int64(3), Max: int64(2)}
	err = fmt.Errorf("config: %w", err)
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Param != "burst" || pe.Max != int64(2) {
		t.Fatalf("errors.As: %v", pe)
	}
	if errors.Is(err, ErrNegativeCost) || errors.Is(err, ErrCostExceedsBurst) {
		t.Fatal("a ParamError is not a cost error")
	}
}
