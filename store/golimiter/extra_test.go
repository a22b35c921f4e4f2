package golimiter

import (
	"context"
	"errors"
	"testing"
	"time"
)

// frozenStore returns a store whose clock reads *now.
func frozenStore(t *testing.T, c *Config) (*Store, *int64) {
	t.Helper()
	s := newStore(t, c)
	now := s.now()
	s.now = func() int64 { return now }
	return s, &now
}

// A second Burst adds to the first grant, not replaces it.
func TestBurstAdds(t *testing.T) {
	s, _ := frozenStore(t, &Config{Tokens: 4, Interval: time.Hour})
	ctx := context.Background()
	for _, n := range []uint64{2, 3} {
		if err := s.Burst(ctx, "k", n); err != nil {
			t.Fatal(err)
		}
	}
	wantGet(t, s, "k", 4, 4+5)
}

// A grant lasts one interval: its tokens count up to the last ns before
// Burst's time plus the interval, and not at it.
func TestBurstLapsesAtInterval(t *testing.T) {
	const d = time.Hour
	s, now := frozenStore(t, &Config{Tokens: 4, Interval: d})
	if err := s.Burst(context.Background(), "k", 3); err != nil {
		t.Fatal(err)
	}
	start := *now
	*now = start + int64(d) - 1
	wantGet(t, s, "k", 4, 4+3)
	*now = start + int64(d)
	wantGet(t, s, "k", 4, 4)
	if _, rem, _, ok, _ := s.Take(context.Background(), "k"); !ok || rem != 3 {
		t.Fatalf("Take at the grant's end: remaining %d, ok %v; want 3 from the bucket", rem, ok)
	}
}

// With MaxBurst keys holding grants, Burst for another key finds room
// from the moment one of them lapses (at its interval's end, to the ns),
// though that key was not read since.
func TestBurstRoomFromLapsed(t *testing.T) {
	const d = time.Hour
	s, now := frozenStore(t, &Config{Tokens: 1, Interval: d, MaxBurst: 2})
	ctx := context.Background()
	start := *now
	for _, k := range []string{"a", "b"} {
		if err := s.Burst(ctx, k, 5); err != nil {
			t.Fatal(err)
		}
		*now += int64(time.Minute)
	}
	*now = start + int64(d) - 1
	if err := s.Burst(ctx, "c", 1); !errors.Is(err, ErrTooMany) {
		t.Fatalf("Burst with both grants live = %v, want ErrTooMany", err)
	}
	*now = start + int64(d) // "a" lapses; "b" has a minute left
	if err := s.Burst(ctx, "c", 1); err != nil {
		t.Fatalf("Burst once a grant lapsed: %v", err)
	}
	wantGet(t, s, "b", 1, 1+5)
	if err := s.Burst(ctx, "d", 1); !errors.Is(err, ErrTooMany) {
		t.Fatalf("Burst with b and c live = %v, want ErrTooMany", err)
	}
}

// live counts the keys holding extra tokens, whichever way a grant goes
// (spent, lapsed when read, swept, cleared by Close): once none holds any,
// Take and Get are back to one atomic load, never taking the lock that
// every Take would otherwise share.
func TestBurstLiveCount(t *testing.T) {
	const d = time.Hour
	s, now := frozenStore(t, &Config{Tokens: 1, Interval: d, MaxBurst: 2})
	ctx := context.Background()
	want := func(n int) {
		t.Helper()
		s.extra.mu.Lock()
		held := len(s.extra.m)
		s.extra.mu.Unlock()
		if live := s.extra.live.Load(); live != int64(n) || held != n {
			t.Fatalf("live %d, %d keys held; want %d", live, held, n)
		}
	}
	burst := func(key string, n uint64) {
		t.Helper()
		if err := s.Burst(ctx, key, n); err != nil {
			t.Fatal(err)
		}
	}
	burst("spent", 1)
	burst("lapsed", 1)
	want(2)
	s.Take(ctx, "spent")
	want(1)
	*now += int64(d)
	s.Get(ctx, "lapsed")
	want(0)
	burst("a", 1)
	burst("b", 1)
	*now += int64(d)
	burst("swept", 1) // a and b are swept for room
	want(1)
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	want(0)
}
