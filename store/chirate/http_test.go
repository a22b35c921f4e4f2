package chirate

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/httprate"
)

// serve runs httprate's middleware on a real server on loopback, keyed by
// the X-Client header; client "heavy" costs 2 a request, client "free"
// costs 0, client "vip" has a limit of 7.
func serve(t *testing.T, opts ...httprate.Option) string {
	t.Helper()
	key := func(r *http.Request) (string, error) { return r.Header.Get("X-Client"), nil }
	mw := httprate.LimitBy(4, time.Hour, key, opts...)
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		switch r.Header.Get("X-Client") {
		case "heavy":
			ctx = httprate.WithIncrement(ctx, 2)
		case "free":
			ctx = httprate.WithIncrement(ctx, 0)
		case "vip":
			ctx = httprate.WithRequestLimit(ctx, 7)
		}
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

type reply struct {
	code                        int
	limit, remaining, increment string
}

func get(t *testing.T, url, client string) reply {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), "GET", url, nil)
	req.Header.Set("X-Client", client)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := resp.Header
	return reply{resp.StatusCode, h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Increment")}
}

// The same clients and requests through httprate's middleware with its
// own counter and with this one: the same status codes and X-RateLimit
// fields (Reset aside: httprate aligns its own counter's windows to its
// start, and any other counter's to the clock).
func TestMiddlewareSameAsLocalCounter(t *testing.T) {
	for attempt := 0; ; attempt++ {
		hour := time.Now().Truncate(time.Hour)
		c, err := New(Options{})
		if err != nil {
			t.Fatal(err)
		}
		urls := []string{serve(t), serve(t, httprate.WithLimitCounter(c))}
		diff := ""
		for i := range 9 {
			for _, cl := range []string{"a", "b", "heavy", "free", "vip"} {
				x, y := get(t, urls[0], cl), get(t, urls[1], cl)
				if x != y && diff == "" {
					diff = fmt.Sprintf("request %d of %s: httprate's counter %+v, cellrate %+v", i, cl, x, y)
				}
			}
		}
		switch {
		case diff == "":
			return
		case attempt == 0 && !time.Now().Truncate(time.Hour).Equal(hour):
			continue // the clock's hour turned during the run: once more
		}
		t.Fatal(diff)
	}
}

// A new client for which the counter has no room is not served: httprate
// answers with its error handler (428 by default), and the clients it
// holds keep their counts.
func TestMiddlewareFullFailsClosed(t *testing.T) {
	c, err := New(Options{Capacity: 4})
	if err != nil {
		t.Fatal(err)
	}
	url := serve(t, httprate.WithLimitCounter(c))
	served, refused := 0, 0
	for i := range 40 {
		switch r := get(t, url, fmt.Sprint("client-", i)); r.code {
		case http.StatusOK:
			served++
		case http.StatusPreconditionRequired:
			refused++
		default:
			t.Fatalf("client %d: %+v", i, r)
		}
	}
	if served > 4 || served+refused != 40 {
		t.Fatalf("served %d and refused %d of 40 new clients with room for 4", served, refused)
	}
}
