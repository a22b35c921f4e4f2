package coalesce

import (
	"context"
	"fmt"
	"testing"
)

// Without a delay the leader's ctx is never consulted: fn starts at once
// and the leader gets its result even when its ctx has already ended.
func TestNoDelayLeaderRunsWithEndedContext(t *testing.T) {
	c := newCounted(t)
	g := mustNew(t, c.fn)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 32 {
		key := fmt.Sprint(i)
		if v, err := g.Do(ctx, key); v != 1 || err != nil {
			t.Fatalf("key %s: a leader without a delay got %d, %v; want fn's 1, nil", key, v, err)
		}
	}
}
