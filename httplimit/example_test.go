package httplimit_test

import (
	"errors"
	"fmt"
	"github.com/cellrate/cellrate/httplimit/clientkey"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"time"

	"github.com/cellrate/cellrate/httplimit"
)

// A policy per route, each with its own key: POST /login by client
// address, 3 attempts at once and 1 more every 10 s; /api/ by API key,
// else by address, 100 a second; and all of /api/ together 1000 a second.
// The fourth login attempt at once is denied.
func Example() {
	lim, err := httplimit.New([]httplimit.Policy{{
		Name:   "login",
		Routes: []string{"POST /login"},
		Key:    clientkey.Peer,
		Client: httplimit.Rate(1, 10*time.Second, 3),
	}, {
		Name:   "api",
		Routes: []string{"/api/"},
		Key:    clientkey.First(clientkey.Header("X-Api-Key"), clientkey.Peer),
		Client: httplimit.Rate(100, time.Second, 100),
		Global: httplimit.Rate(1000, time.Second, 1000),
	}})
	if err != nil {
		panic(err)
	}
	h := lim.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))
	for range 4 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/login", nil)) // from 192.0.2.1:1234
		fmt.Println(w.Code, w.Header().Values("Retry-After"))
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/api/items", nil)
	r.Header.Set("X-Api-Key", "k-42")
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("RateLimit-Policy"))
	// Output:
	// 200 []
	// 200 []
	// 200 []
	// 429 [10]
	// 200 "api";q=100;w=1, "api-global";q=1000;w=1
}

// A deny handler that answers in the API's own format, from the Decision:
// the limit that denied and when to retry. Uploads cost 2 of a client's
// burst of 3, so the second upload at once is denied.
func ExampleWithDenyHandler() {
	lim, err := httplimit.New([]httplimit.Policy{{
		Name:   "upload",
		Cost:   func(*http.Request) int64 { return 2 },
		Client: httplimit.Rate(1, time.Second, 3),
	}}, httplimit.WithClock(func() int64 { return 0 }), httplimit.WithDenyHandler(
		func(w http.ResponseWriter, r *http.Request, d httplimit.Decision) {
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprintf(w, `{"limit":%q,"client":%q,"retry_ms":%d}`, d.Limit, d.Key, d.RetryAfter.Milliseconds())
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	h := lim.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for range 2 {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/upload", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		h.ServeHTTP(w, r)
		if w.Code == http.StatusOK {
			fmt.Println(w.Code)
			continue
		}
		fmt.Println(w.Code, w.Header().Get("Retry-After"), w.Body.String())
	}
	// Output:
	// 200
	// 429 1 {"limit":"upload","client":"192.0.2.1","retry_ms":1000}
}

// Behind a load balancer at 10.0.0.0/8, each client may have 2 requests
// being served at once, and costs its request's size in KiB of a budget
// of 64 KiB, refilled at 16 KiB a second. An upload the budget cannot
// hold is answered 413 by the default error handler, and so is one that
// does not tell its size up front (a chunked body): were it to cost 1,
// any size would.
func ExamplePolicy() {
	key, err := clientkey.Proxy("X-Forwarded-For", netip.MustParsePrefix("10.0.0.0/8"))
	if err != nil {
		panic(err)
	}
	lim, err := httplimit.New([]httplimit.Policy{{
		Name:   "upload",
		Routes: []string{"PUT /files/"},
		Key:    key,
		Cost: func(r *http.Request) int64 {
			if r.ContentLength < 0 {
				return math.MaxInt64 // unknown: more than any budget
			}
			return max(1, (r.ContentLength+1023)/1024)
		},
		Client:         httplimit.Rate(16, time.Second, 64),
		ClientInFlight: 2,
	}}, httplimit.WithClock(func() int64 { return 0 }))
	if err != nil {
		panic(err)
	}
	h := lim.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, kib := range []int{40, 40, 20, 100, -1} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("PUT", "/files/a", strings.NewReader(strings.Repeat("x", max(kib, 1)<<10)))
		if kib < 0 {
			r.ContentLength = -1 // chunked
		}
		r.RemoteAddr = "10.1.2.3:5000"
		r.Header.Set("X-Forwarded-For", "198.51.100.20")
		h.ServeHTTP(w, r)
		fmt.Println(kib, "KiB:", w.Code, w.Header().Values("RateLimit"))
	}
	fmt.Println(lim.Stats()["upload"].Admitted, "admitted,", lim.Stats()["upload"].Denied, "denied")
	// Output:
	// 40 KiB: 200 ["upload";r=24;t=3]
	// 40 KiB: 429 ["upload";r=24;t=1]
	// 20 KiB: 200 ["upload";r=4;t=4]
	// 100 KiB: 413 []
	// -1 KiB: 413 []
	// 2 admitted, 1 denied
}

// A server that would rather serve a request unlimited than refuse it
// when its client cannot be named (fail open): here a request without
// its API key. Errors still count in Stats.
func ExampleWithErrorHandler() {
	lim, err := httplimit.New([]httplimit.Policy{{
		Name:   "api",
		Key:    clientkey.Header("X-Api-Key"),
		Client: httplimit.Rate(1, time.Second, 1),
	}}, httplimit.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) bool {
		if errors.Is(err, clientkey.ErrNoKey) {
			return true // serve it, unlimited
		}
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return false
	}))
	if err != nil {
		panic(err)
	}
	h := lim.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for range 2 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Println(w.Code)
	}
	fmt.Println(lim.Stats()["api"].Errors, "errors")
	// Output:
	// 200
	// 200
	// 2 errors
}
