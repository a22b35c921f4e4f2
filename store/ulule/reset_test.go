package ulule

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	limiter "github.com/ulule/limiter/v3"
)

// TestResetsForgottenNeverLoosen: an attacker that can make the store
// Reset many keys (its own accounts, say) past MaxResets must not give
// back a burst to a key whose Reset it did not ask for. A victim reset
// once, that then spent its limit under its new name, stays at its limit
// whatever other keys are reset, until its own next Reset.
func TestResetsForgottenNeverLoosen(t *testing.T) {
	s := newStore(t, Options{MaxResets: 2})
	ctx := context.Background()
	r := limiter.Rate{Limit: 3, Period: time.Hour}
	if _, err := s.Reset(ctx, "victim", r); err != nil {
		t.Fatal(err)
	}
	taken := 0
	for range 10 {
		if c, _ := s.Get(ctx, "victim", r); !c.Reached {
			taken++
		}
	}
	for i := range 8 { // the attacker's own keys, reset past MaxResets
		s.Reset(ctx, string(rune('a'+i)), r)
		for range 10 {
			if c, _ := s.Get(ctx, "victim", r); !c.Reached {
				taken++
			}
		}
	}
	if taken != 3 {
		t.Fatalf("the victim took %d within an hour of its one Reset, its limit is 3", taken)
	}
}

// TestResetForgottenOncePaid: a key's Reset is forgotten, to make room,
// once its bucket is full again under every Rate (going back to its state
// before the Reset then cannot admit more); while every remembered key
// still owes, a Reset past MaxResets is refused with ErrTooManyResets and
// changes nothing.
func TestResetForgottenOncePaid(t *testing.T) {
	s := newStore(t, Options{MaxResets: 1})
	ctx := context.Background()
	long := limiter.Rate{Limit: 1, Period: time.Hour}
	short := limiter.Rate{Limit: 1, Period: 20 * time.Millisecond}
	s.Get(ctx, "a", long) // a's name before its Reset owes an hour
	if _, err := s.Reset(ctx, "a", short); err != nil {
		t.Fatal(err)
	}
	s.Get(ctx, "a", short) // its new name owes 20ms
	if _, err := s.Reset(ctx, "b", short); err != ErrTooManyResets {
		t.Fatalf("a Reset past MaxResets while the one remembered key owes: %v", err)
	}
	if c, _ := s.Peek(ctx, "b", short); c.Remaining != 1 {
		t.Fatalf("b after a refused Reset: %+v", c)
	}
	time.Sleep(30 * time.Millisecond) // a's new name is paid under both Rates
	if _, err := s.Reset(ctx, "b", short); err != nil {
		t.Fatalf("a Reset once the remembered key is paid: %v", err)
	}
	// a is back under its old name, which still owes the hour.
	if c, _ := s.Get(ctx, "a", long); !c.Reached {
		t.Fatalf("a went back to a fresh name, not to its state before its Reset: %+v", c)
	}
}

// TestResetsConcurrent: goroutines spend victims' limits while others
// reset keys of their own past MaxResets (forgetting paid ones, refused
// otherwise): no victim takes more than its limit after its one Reset.
func TestResetsConcurrent(t *testing.T) {
	s := newStore(t, Options{MaxResets: 8})
	ctx := context.Background()
	r := limiter.Rate{Limit: 5, Period: time.Hour}
	const victims = 4
	var taken [victims]atomic.Int64
	for v := range victims { // reset, then spent before the others' Resets
		if _, err := s.Reset(ctx, fmt.Sprint("victim", v), r); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if c, _ := s.Get(ctx, fmt.Sprint("victim", v), r); !c.Reached {
				taken[v].Add(1)
			}
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 300 {
				if g%2 == 0 {
					v := (g + i) % victims
					if c, err := s.Get(ctx, fmt.Sprint("victim", v), r); err == nil && !c.Reached {
						taken[v].Add(1)
					}
					continue
				}
				k := fmt.Sprint("own", g, "-", i)
				if _, err := s.Reset(ctx, k, r); err == nil && i%2 == 0 {
					s.Get(ctx, k, r) // a reset name that owes, not to be forgotten
				}
			}
		})
	}
	wg.Wait()
	for v := range victims {
		if n := taken[v].Load(); n != 5 {
			t.Errorf("victim %d took %d after its Reset, its limit is 5", v, n)
		}
	}
}

// TestResetsForgetOldestFirst: past MaxResets, Resets forget the paid
// remembered keys in the order they were reset, each going back to its
// state before its Reset, and keep the newer ones.
func TestResetsForgetOldestFirst(t *testing.T) {
	s := newStore(t, Options{MaxResets: 2})
	ctx := context.Background()
	r := limiter.Rate{Limit: 1, Period: time.Hour}
	keys := []string{"a", "b", "c", "d", "e", "f"}
	for i, k := range keys {
		s.Get(ctx, k, r) // its name before its Reset owes an hour
		if _, err := s.Reset(ctx, k, r); err != nil {
			t.Fatalf("Reset of %s, every remembered key paid: %v", k, err)
		}
		for j, old := range keys[:i+1] {
			remembered := j >= i-1 // the two reset last
			if c, _ := s.Peek(ctx, old, r); c.Reached == remembered {
				t.Fatalf("after the Reset of %s: %s is %+v; want a full bucket: %v", k, old, c, remembered)
			}
		}
	}
}
