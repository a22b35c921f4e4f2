package golimiter

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
	limiter "github.com/sethvargo/go-limiter"
)

func newStore(t testing.TB, c *Config) *Store {
	t.Helper()
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	return s
}

func wantGet(t *testing.T, s *Store, key string, limit, remaining uint64) {
	t.Helper()
	l, r, err := s.Get(context.Background(), key)
	if err != nil || l != limit || r != remaining {
		t.Fatalf("Get(%q) = %d, %d, %v; want %d, %d, nil", key, l, r, err, limit, remaining)
	}
}

func wantTake(t *testing.T, s *Store, key string, limit, remaining uint64, ok bool, within time.Duration) {
	t.Helper()
	l, r, reset, got, err := s.Take(context.Background(), key)
	if err != nil || l != limit || r != remaining || got != ok {
		t.Fatalf("Take(%q) = %d, %d, _, %v, %v; want %d, %d, _, %v, nil", key, l, r, got, err, limit, remaining, ok)
	}
	if d := time.Until(time.Unix(0, int64(reset))); d > within+time.Millisecond || d < -time.Second {
		t.Fatalf("Take(%q): reset in %v, want at most %v", key, d, within)
	}
}

// The sequence memorystore's own exercise test runs: default limit, Set,
// Burst, with Get between; the one difference is Get on a key never seen.
// (Its Set is 11 per 5s; 10 here, so that a token is a whole number of ns
// and Remaining right after a take is exact, see the package doc.)
func TestExercise(t *testing.T) {
	s := newStore(t, &Config{Tokens: 5, Interval: 3 * time.Hour})
	const key = "exercise"
	wantGet(t, s, key, 5, 5) // memorystore: 0, 0
	wantTake(t, s, key, 5, 4, true, 3*time.Hour)
	wantGet(t, s, key, 5, 4)
	if err := s.Set(context.Background(), key, 10, 5*time.Hour); err != nil {
		t.Fatal(err)
	}
	wantGet(t, s, key, 10, 10)
	wantTake(t, s, key, 10, 9, true, 5*time.Hour)
	wantGet(t, s, key, 10, 9)
	if err := s.Burst(context.Background(), key, 5); err != nil {
		t.Fatal(err)
	}
	wantTake(t, s, key, 10, 13, true, 5*time.Hour)
	wantGet(t, s, key, 10, 13)
}

// Twice the tokens taken at once: exactly the first half admitted, with
// remaining counting down, as memorystore's Take test checks.
func TestTakeConcurrent(t *testing.T) {
	for _, tokens := range []uint64{5, 10} {
		t.Run(fmt.Sprint(tokens), func(t *testing.T) {
			s := newStore(t, &Config{Tokens: tokens, Interval: time.Hour})
			// One instant for every take: with the clock running, a take
			// whose time was read before another's reads its Remaining at
			// that earlier time, a token lower.
			frozen := s.now()
			s.now = func() int64 { return frozen }
			type res struct {
				rem uint64
				ok  bool
			}
			out := make(chan res, 2*tokens)
			for range 2 * tokens {
				go func() {
					l, r, _, ok, err := s.Take(context.Background(), "k")
					if err != nil || l != tokens {
						t.Errorf("Take = %d, _, _, _, %v", l, err)
					}
					out <- res{r, ok}
				}()
			}
			var rs []res
			for range 2 * tokens {
				rs = append(rs, <-out)
			}
			sort.Slice(rs, func(i, j int) bool {
				if rs[i].rem == rs[j].rem {
					return rs[i].ok && !rs[j].ok
				}
				return rs[i].rem > rs[j].rem
			})
			for i, r := range rs {
				want := res{}
				if uint64(i) < tokens {
					want = res{tokens - uint64(i) - 1, true}
				}
				if r != want {
					t.Fatalf("result %d = %+v, want %+v", i, r, want)
				}
			}
		})
	}
}

// An empty bucket holds a token again after Interval/Tokens, and reset
// after a denial says when.
func TestRefill(t *testing.T) {
	s := newStore(t, &Config{Tokens: 2, Interval: 20 * time.Millisecond})
	wantTake(t, s, "k", 2, 1, true, 20*time.Millisecond)
	wantTake(t, s, "k", 2, 0, true, 20*time.Millisecond)
	_, _, reset, ok, _ := s.Take(context.Background(), "k")
	if ok {
		t.Skip("the machine paused for a whole token's time") // not a failure of the store
	}
	time.Sleep(time.Until(time.Unix(0, int64(reset))) + time.Millisecond)
	if _, _, _, ok, _ := s.Take(context.Background(), "k"); !ok {
		t.Fatal("no token at the reset a denial gave")
	}
}

func TestBurst(t *testing.T) {
	s := newStore(t, &Config{Tokens: 1, Interval: time.Hour, MaxBurst: 1})
	ctx := context.Background()
	if err := s.Burst(ctx, "a", 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Burst(ctx, "b", 2); !errors.Is(err, ErrTooMany) {
		t.Fatalf("Burst past MaxBurst = %v, want ErrTooMany", err)
	}
	wantTake(t, s, "a", 1, 2, true, 0) // an extra token: the bucket stays full
	wantTake(t, s, "a", 1, 1, true, 0)
	wantTake(t, s, "a", 1, 0, true, time.Hour)
	wantTake(t, s, "a", 1, 0, false, time.Hour)
	if err := s.Burst(ctx, "b", 1); err != nil { // "a" has spent its grant: room again
		t.Fatal(err)
	}
}

func TestBurstLapses(t *testing.T) {
	s := newStore(t, &Config{Tokens: 1, Interval: 5 * time.Millisecond})
	if err := s.Burst(context.Background(), "k", 100); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	wantGet(t, s, "k", 1, 1)
}

func TestSet(t *testing.T) {
	s := newStore(t, &Config{Tokens: 3, Interval: time.Hour, MaxSet: 2, MaxLimits: 1})
	ctx := context.Background()
	wantTake(t, s, "k", 3, 2, true, time.Hour)
	if err := s.Set(ctx, "k", 8, time.Hour); err != nil {
		t.Fatal(err)
	}
	wantTake(t, s, "k", 8, 7, true, time.Hour)
	if err := s.Set(ctx, "k", 3, time.Hour); err != nil { // back to the default: as it left it
		t.Fatal(err)
	}
	wantGet(t, s, "k", 3, 2)
	if err := s.Set(ctx, "k", 8, time.Hour); err != nil {
		t.Fatal(err)
	}
	wantGet(t, s, "k", 8, 7) // Set does not refill
	if err := s.Set(ctx, "j", 9, time.Hour); !errors.Is(err, ErrTooMany) {
		t.Fatalf("a second limit past MaxLimits = %v, want ErrTooMany", err)
	}
	if err := s.Set(ctx, "j", 8, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(ctx, "i", 8, time.Hour); !errors.Is(err, ErrTooMany) {
		t.Fatalf("a third key past MaxSet = %v, want ErrTooMany", err)
	}
	wantGet(t, s, "i", 3, 3)
	var pe *limit.ParamError
	if err := s.Set(ctx, "i", 0, time.Hour); !errors.As(err, &pe) {
		t.Fatalf("Set of 0 tokens = %v, want a *limit.ParamError", err)
	}
}

func TestNewRefuses(t *testing.T) {
	var pe *limit.ParamError
	if _, err := New(&Config{Tokens: 1 << 63}); !errors.As(err, &pe) {
		t.Fatalf("New with 2^63 tokens a second = %v, want a *limit.ParamError", err)
	}
	if _, err := New(&Config{Capacity: 1}); !errors.As(err, &pe) || pe.Param != "capacity" {
		t.Fatalf("New with capacity 1 = %v, want a *limit.ParamError for capacity", err)
	}
}

func TestClose(t *testing.T) {
	s, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if l, r, reset, ok, err := s.Take(ctx, "k"); l != 0 || r != 0 || reset != 0 || ok || !errors.Is(err, limiter.ErrStopped) {
		t.Fatalf("Take after Close = %d %d %d %v %v", l, r, reset, ok, err)
	}
	if _, _, err := s.Get(ctx, "k"); !errors.Is(err, limiter.ErrStopped) {
		t.Fatalf("Get after Close: %v", err)
	}
	if err := s.Set(ctx, "k", 2, time.Second); !errors.Is(err, limiter.ErrStopped) {
		t.Fatalf("Set after Close: %v", err)
	}
	if err := s.Burst(ctx, "k", 2); !errors.Is(err, limiter.ErrStopped) {
		t.Fatalf("Burst after Close: %v", err)
	}
}

// Many goroutines on many keys: each key gets exactly its tokens plus its
// extra ones, never more (the interval is far longer than the test).
func TestBoundConcurrent(t *testing.T) {
	const keys, workers, tokens, extra = 64, 16, 7, 3
	s := newStore(t, &Config{Tokens: tokens, Interval: time.Hour, MaxBurst: keys})
	ctx := context.Background()
	for k := range keys {
		if k%2 == 0 {
			if err := s.Burst(ctx, fmt.Sprint(k), extra); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got [keys]int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine [keys]int
			for i := range 4 * (tokens + extra) * keys {
				k := (i + w) % keys
				if _, _, _, ok, err := s.Take(ctx, fmt.Sprint(k)); err != nil {
					t.Error(err)
				} else if ok {
					mine[k]++
				}
			}
			mu.Lock()
			for k := range mine {
				got[k] += mine[k]
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	for k, n := range got {
		want := tokens
		if k%2 == 0 {
			want += extra
		}
		if n != want {
			t.Errorf("key %d admitted %d, want exactly %d", k, n, want)
		}
	}
}

// A grant of Burst saturates at the largest count, and remaining with it
// saturates too, never wrapping to a few tokens.
func TestBurstSaturates(t *testing.T) {
	s := newStore(t, &Config{Tokens: 3, Interval: time.Hour})
	ctx := context.Background()
	for range 2 {
		if err := s.Burst(ctx, "k", ^uint64(0)-1); err != nil {
			t.Fatal(err)
		}
	}
	if _, rem, err := s.Get(ctx, "k"); err != nil || rem != ^uint64(0) {
		t.Fatalf("Get: remaining %d, %v; want the largest count", rem, err)
	}
	if _, rem, _, ok, _ := s.Take(ctx, "k"); !ok || rem != ^uint64(0) {
		t.Fatalf("Take: remaining %d, ok %v; want the largest count", rem, ok)
	}
}
