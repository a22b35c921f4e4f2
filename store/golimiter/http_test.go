package golimiter

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	limiter "github.com/sethvargo/go-limiter"
	"github.com/sethvargo/go-limiter/httplimit"
	"github.com/sethvargo/go-limiter/memorystore"
)

// serve runs s behind go-limiter's own middleware on a real server on
// loopback, keyed by the X-Client header.
func serve(t *testing.T, s limiter.Store) string {
	t.Helper()
	mw, err := httplimit.NewMiddleware(s, httplimit.IPKeyFunc("X-Client"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw.Handle(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "ok")
	})))
	t.Cleanup(srv.Close)
	return srv.URL
}

type reply struct {
	code             int
	limit, remaining string
}

func get(t *testing.T, url, client string) (reply, time.Time) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-Client", client)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	reset, err := time.Parse(time.RFC1123, resp.Header.Get(httplimit.HeaderRateLimitReset))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get(httplimit.HeaderRetryAfter) == "" {
		t.Fatal("a 429 without Retry-After")
	}
	return reply{resp.StatusCode, resp.Header.Get(httplimit.HeaderRateLimitLimit), resp.Header.Get(httplimit.HeaderRateLimitRemaining)}, reset
}

// The same clients, the same requests, the same Set and Burst, through
// go-limiter's middleware on memorystore and on this store: the same
// status codes and X-RateLimit-Limit/Remaining fields, and a reset within
// the interval on both.
func TestMiddlewareSameAsMemorystore(t *testing.T) {
	ctx := context.Background()
	mem, err := memorystore.New(&memorystore.Config{Tokens: 4, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close(ctx)
	ours := newStore(t, &Config{Tokens: 4, Interval: time.Hour})
	stores := []limiter.Store{mem, ours}
	urls := []string{serve(t, mem), serve(t, ours)}
	for _, s := range stores {
		if err := s.Set(ctx, "gold", 9, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	clients := []string{"a", "b", "gold", "promo"}
	for i := range 12 {
		if i == 1 {
			for _, s := range stores { // on a key each store holds
				if err := s.Burst(ctx, "promo", 3); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, c := range clients {
			var got [2]reply
			for j, u := range urls {
				r, reset := get(t, u, c)
				if d := time.Until(reset); d > time.Hour+time.Second {
					t.Fatalf("store %d client %s: reset in %v", j, c, d)
				}
				got[j] = r
			}
			if got[0] != got[1] {
				t.Fatalf("request %d of %s: memorystore %+v, cellrate %+v", i, c, got[0], got[1])
			}
		}
	}
}

// Where they differ: memorystore refills the whole bucket at each tick of
// the interval, counted from the key's first request, so a client that
// waits for the tick takes the rest of one tick's tokens and all of the
// next within a moment; this store's bucket admits at most
// tokens + tokens*t/interval over any span t.
func TestTickBurst(t *testing.T) {
	const tokens, interval, span = 5, 100 * time.Millisecond, 8 * time.Millisecond
	ctx := context.Background()
	mem, err := memorystore.New(&memorystore.Config{Tokens: tokens, Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close(ctx)
	ours := newStore(t, &Config{Tokens: tokens, Interval: interval})
	burst := func(s limiter.Store) (int, time.Duration) {
		t0 := time.Now()
		s.Take(ctx, "k")
		time.Sleep(time.Until(t0.Add(interval - span/2)))
		n, first, last := 0, time.Time{}, time.Time{}
		for end := time.Now().Add(span); time.Now().Before(end); {
			at := time.Now() // at or before the decision's time
			if _, _, _, ok, _ := s.Take(ctx, "k"); ok {
				if last = time.Now(); n == 0 {
					first = at
				}
				n++
			}
		}
		return n, last.Sub(first)
	}
	m, _ := burst(mem)
	o, took := burst(ours)
	t.Logf("admitted within %v around a tick: memorystore %d, cellrate %d (%d tokens per %v)", span, m, o, tokens, interval)
	// The bound over a span holding every admission's time (a preempted
	// loop runs past span).
	if bound := tokens + tokens*int(took)/int(interval); o > bound {
		t.Fatalf("cellrate admitted %d in %v, bound %d", o, took, bound)
	}
}
