package ululeredis_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/store/ululeredis"
	limiter "github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	redisstore "github.com/ulule/limiter/v3/drivers/store/redis"
	"github.com/ulule/limiter/v3/drivers/store/tests"
)

func newStore(t testing.TB, prefix string) *ululeredis.Store {
	t.Helper()
	s, err := ululeredis.New(client(t), ululeredis.Options{Prefix: prefix + fmt.Sprint(time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ulule's own concurrency test for stores, pointed at this one (250,000
// round trips).
func TestLibraryConcurrentAccess(t *testing.T) {
	if testing.Short() {
		t.Skip("250,000 round trips; TestFleetBound runs a smaller drive")
	}
	tests.TestStoreConcurrentAccess(t, newStore(t, "conc"))
}

func want(t *testing.T, what string, c limiter.Context, err error, remaining int64, reached bool) {
	t.Helper()
	if err != nil || c.Limit != 3 || c.Remaining != remaining || c.Reached != reached {
		t.Fatalf("%s = %+v, %v; want limit 3, remaining %d, reached %v", what, c, err, remaining, reached)
	}
	if d := c.Reset - time.Now().Unix(); d < 0 || d > 61 {
		t.Fatalf("%s: reset in %ds", what, d)
	}
}

// The sequence ulule's sequential store test runs, with its one
// difference: a Peek with no unit left is Reached.
func TestSequential(t *testing.T) {
	l := limiter.New(newStore(t, "seq"), limiter.Rate{Limit: 3, Period: time.Minute})
	ctx := context.Background()
	for i := int64(1); i <= 6; i++ {
		if i <= 3 {
			c, err := l.Peek(ctx, "foo")
			want(t, "Peek", c, err, 3-(i-1), false)
		}
		c, err := l.Get(ctx, "foo")
		if i <= 3 {
			want(t, "Get", c, err, 3-i, false)
			c, err = l.Peek(ctx, "foo")
			want(t, "Peek", c, err, 3-i, i == 3)
		} else {
			want(t, "Get", c, err, 0, true)
		}
	}
	for range 2 {
		c, err := l.Reset(ctx, "foo")
		want(t, "Reset", c, err, 3, false)
		c, err = l.Get(ctx, "foo")
		want(t, "Get", c, err, 2, false)
	}
	c, err := l.Increment(ctx, "foo", 4)
	want(t, "Increment over the limit", c, err, 0, true)
	c, err = l.Increment(ctx, "foo", 2)
	want(t, "Increment 2", c, err, 0, false)
	if _, err := l.Increment(ctx, "foo", -1); !errors.Is(err, ululeredis.ErrNegativeCount) {
		t.Fatalf("Increment -1: %v", err)
	}
}

func TestParams(t *testing.T) {
	var pe *limit.ParamError
	if _, err := ululeredis.New(nil, ululeredis.Options{}); !errors.As(err, &pe) {
		t.Fatalf("a nil client: %v", err)
	}
	s, err := ululeredis.New(client(t), ululeredis.Options{MaxRates: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Peek(ctx, "k", limiter.Rate{Limit: 0, Period: time.Second}); !errors.As(err, &pe) {
		t.Fatalf("a limit of 0: %v", err)
	}
	if _, err := s.Peek(ctx, "k", limiter.Rate{Limit: 1, Period: time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Peek(ctx, "k", limiter.Rate{Limit: 2, Period: time.Second}); !errors.Is(err, ululeredis.ErrTooManyRates) {
		t.Fatalf("a second rate past MaxRates: %v", err)
	}
}

// Two stores (two processes of a fleet, each its own client) and many
// goroutines on many keys: each key gets exactly its limit in all.
func TestFleetBound(t *testing.T) {
	const keys, workers, lim = 20, 8, 9
	prefix := fmt.Sprint("fleet", time.Now().UnixNano())
	rate := limiter.Rate{Limit: lim, Period: time.Hour}
	var got [keys]int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for p := range 2 {
		s, err := ululeredis.New(client(t), ululeredis.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine [keys]int
				for i := range 2 * lim * keys / workers {
					k := (i + w + p) % keys
					c, err := s.Get(context.Background(), fmt.Sprint(k), rate)
					if err != nil {
						t.Error(err)
						return
					}
					if !c.Reached {
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
	}
	wg.Wait()
	for k, n := range got {
		if n != lim {
			t.Errorf("key %d admitted %d across the fleet, want exactly %d", k, n, lim)
		}
	}
}

// The same clients and requests through ulule's stdlib middleware on its
// own Redis store and on this one, on the same server: the same status
// codes and X-RateLimit-Limit/Remaining fields.
func TestMiddlewareSameAsRedisStore(t *testing.T) {
	rate := limiter.Rate{Limit: 4, Period: time.Hour}
	theirs, err := redisstore.NewStoreWithOptions(client(t), limiter.StoreOptions{Prefix: fmt.Sprint("ulule", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, s := range []limiter.Store{theirs, newStore(t, "mw")} {
		mw := stdlib.NewMiddleware(limiter.New(s, rate),
			stdlib.WithKeyGetter(func(r *http.Request) string { return r.Header.Get("X-Client") }))
		srv := httptest.NewServer(mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	type reply struct {
		code             int
		limit, remaining string
	}
	for i := range 7 {
		for _, cl := range []string{"a", "b"} {
			var got [2]reply
			for j, u := range urls {
				req, _ := http.NewRequest("GET", u, nil)
				req.Header.Set("X-Client", cl)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got[j] = reply{resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"), resp.Header.Get("X-RateLimit-Remaining")}
			}
			if got[0] != got[1] {
				t.Fatalf("request %d of %s: ulule's Redis store %+v, cellrate %+v", i, cl, got[0], got[1])
			}
		}
	}
}
