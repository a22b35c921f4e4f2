package ulule

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ulule/limiter/v3"
)

// TestZeroStore: every call on the zero Store fails with ErrZeroValue,
// admitting nothing, and none panics.
func TestZeroStore(t *testing.T) {
	var s Store
	ctx := context.Background()
	r := limiter.Rate{Period: time.Second, Limit: 5}
	for name, f := range map[string]func() (limiter.Context, error){
		"Get":       func() (limiter.Context, error) { return s.Get(ctx, "k", r) },
		"Increment": func() (limiter.Context, error) { return s.Increment(ctx, "k", 1, r) },
		"Peek":      func() (limiter.Context, error) { return s.Peek(ctx, "k", r) },
		"Reset":     func() (limiter.Context, error) { return s.Reset(ctx, "k", r) },
	} {
		if c, err := f(); !errors.Is(err, ErrZeroValue) || c.Remaining != 0 {
			t.Errorf("%s = %+v, %v", name, c, err)
		}
	}
}
