package ulule

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	limiter "github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	"github.com/ulule/limiter/v3/drivers/store/memory"
)

// serve runs store behind ulule's stdlib middleware on a real server on
// loopback, keyed by the X-Client header.
func serve(t *testing.T, store limiter.Store, rate limiter.Rate) string {
	t.Helper()
	mw := stdlib.NewMiddleware(limiter.New(store, rate),
		stdlib.WithKeyGetter(func(r *http.Request) string { return r.Header.Get("X-Client") }))
	srv := httptest.NewServer(mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "ok")
	})))
	t.Cleanup(srv.Close)
	return srv.URL
}

type reply struct {
	code             int
	limit, remaining string
}

func get(t *testing.T, url, client string) (reply, int64) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-Client", client)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"), resp.Header.Get("X-RateLimit-Remaining")}, reset
}

// The same clients and requests through ulule's stdlib middleware on its
// memory store and on this store: the same status codes and
// X-RateLimit-Limit/Remaining fields, a Reset within the period on both.
func TestMiddlewareSameAsMemoryStore(t *testing.T) {
	rate := limiter.Rate{Limit: 4, Period: time.Hour}
	urls := []string{serve(t, memory.NewStore(), rate), serve(t, newStore(t, Options{}), rate)}
	for i := range 8 {
		for _, c := range []string{"a", "b", "c"} {
			var got [2]reply
			for j, u := range urls {
				r, reset := get(t, u, c)
				if d := reset - time.Now().Unix(); d < 0 || d > 3601 {
					t.Fatalf("store %d client %s: reset in %ds", j, c, d)
				}
				got[j] = r
			}
			if got[0] != got[1] {
				t.Fatalf("request %d of %s: memory store %+v, cellrate %+v", i, c, got[0], got[1])
			}
		}
	}
}

// Where they differ: the memory store forgets a key's count when the
// window its first request opened expires, so a client that waits for the
// expiry takes the rest of one window and all of the next within a
// moment; this store admits at most Limit + Limit*t/Period over any span t.
func TestExpiryBurst(t *testing.T) {
	const lim, period, span = 5, 100 * time.Millisecond, 8 * time.Millisecond
	rate := limiter.Rate{Limit: lim, Period: period}
	ctx := context.Background()
	burst := func(s limiter.Store) (int, time.Duration) {
		t0 := time.Now()
		s.Get(ctx, "k", rate)
		time.Sleep(time.Until(t0.Add(period - span/2)))
		n, first, last := 0, time.Time{}, time.Time{}
		for end := time.Now().Add(span); time.Now().Before(end); {
			at := time.Now() // at or before the decision's time
			if c, _ := s.Get(ctx, "k", rate); !c.Reached {
				if last = time.Now(); n == 0 {
					first = at
				}
				n++
			}
		}
		return n, last.Sub(first)
	}
	m, _ := burst(memory.NewStore())
	o, took := burst(newStore(t, Options{}))
	t.Logf("admitted within %v around an expiry: memory store %d, cellrate %d (%d per %v)", span, m, o, lim, period)
	// The bound over a span holding every admission's time (a preempted
	// loop runs past span).
	if bound := lim + lim*int(took)/int(period); o > bound {
		t.Fatalf("cellrate admitted %d in %v, bound %d", o, took, bound)
	}
}
