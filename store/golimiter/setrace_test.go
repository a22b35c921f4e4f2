package golimiter

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestSetRaceAtMaxSet: with MaxSet keys set, goroutines setting one more
// key at once all get ErrTooMany, or the key holds the limit they set: a
// Set that returned nil is never undone by a concurrent one refused.
func TestSetRaceAtMaxSet(t *testing.T) {
	rounds := 20000
	if testing.Short() {
		rounds = 3000
	}
	ctx := context.Background()
	s := newStore(t, &Config{Tokens: 100, Interval: time.Second, MaxSet: 1})
	if err := s.Set(ctx, "full", 1, time.Hour); err != nil {
		t.Fatal(err)
	}
	lost := 0
	for round := range rounds {
		key := strconv.Itoa(round)
		var wg sync.WaitGroup
		var oks [8]bool
		start := make(chan struct{})
		for g := range oks {
			wg.Go(func() {
				<-start
				oks[g] = s.Set(ctx, key, 1, time.Hour) == nil
			})
		}
		close(start)
		wg.Wait()
		if slices.Contains(oks[:], true) && s.tableOf(key) == s.def {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d rounds: a Set returned nil and the key kept the default limit", lost, rounds)
	}
}
