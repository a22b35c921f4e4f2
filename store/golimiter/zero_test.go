package golimiter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sethvargo/go-limiter"
)

// TestZeroStore: the zero Store is as if closed: every call fails with
// limiter.ErrStopped, Take admits nothing, and none panics.
func TestZeroStore(t *testing.T) {
	var s Store
	ctx := context.Background()
	if _, _, _, ok, err := s.Take(ctx, "k"); ok || !errors.Is(err, limiter.ErrStopped) {
		t.Fatalf("Take = %v, %v", ok, err)
	}
	if _, _, err := s.Get(ctx, "k"); !errors.Is(err, limiter.ErrStopped) {
		t.Fatalf("Get: %v", err)
	}
	if err := s.Set(ctx, "k", 5, time.Second); !errors.Is(err, limiter.ErrStopped) {
		t.Fatalf("Set: %v", err)
	}
	if err := s.Burst(ctx, "k", 5); !errors.Is(err, limiter.ErrStopped) {
		t.Fatalf("Burst: %v", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
