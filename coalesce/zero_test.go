package coalesce

import (
	"context"
	"errors"
	"testing"
)

// TestZeroGroup: the zero Group runs nothing: Do returns an error that is
// ErrStopped, without blocking, and Flush, Stop and Waiting do not panic.
func TestZeroGroup(t *testing.T) {
	var g Group[string, int]
	for range 2 {
		if v, err := g.Do(context.Background(), "k"); v != 0 || !errors.Is(err, ErrStopped) {
			t.Fatalf("Do = %d, %v", v, err)
		}
		if g.Waiting("k") != 0 {
			t.Fatal("the zero Group has waiters")
		}
		g.Flush()
		g.Stop()
	}
}
