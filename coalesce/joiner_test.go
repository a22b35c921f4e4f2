package coalesce

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestJoinerGivesUp: a joiner whose context ends leaves the count of
// waiters at once, and the execution it left goes on for the others. With a
// delay, a leader whose context ends after its only joiner gave up drops
// the execution: fn never runs.
func TestJoinerGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		calls := 0
		g, _ := New(func(string) (int, error) { calls++; <-release; return 7, nil })
		go g.Do(context.Background(), "k") // the leader, blocked in fn
		synctest.Wait()
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() { _, err := g.Do(ctx, "k"); errc <- err }()
		go g.Do(context.Background(), "k")
		synctest.Wait()
		if n := g.Waiting("k"); n != 2 {
			t.Fatalf("Waiting = %d with two joiners, want 2", n)
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("the joiner that gave up got %v", err)
		}
		if n := g.Waiting("k"); n != 1 {
			t.Fatalf("Waiting = %d after one joiner gave up, want 1", n)
		}
		close(release)
		synctest.Wait()
		if calls != 1 || g.Waiting("k") != 0 {
			t.Fatalf("fn ran %d times, %d waiting", calls, g.Waiting("k"))
		}
	})
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		g, _ := New(func(string) (int, error) { calls++; return 1, nil }, WithDelay(time.Second))
		lctx, lcancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { _, err := g.Do(lctx, "k"); done <- err }()
		synctest.Wait()
		jctx, jcancel := context.WithCancel(context.Background())
		go g.Do(jctx, "k")
		synctest.Wait()
		jcancel()
		synctest.Wait()
		lcancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("the leader got %v", err)
		}
		time.Sleep(2 * time.Second)
		if calls != 0 {
			t.Fatalf("fn ran %d times for callers that all gave up", calls)
		}
	})
}
