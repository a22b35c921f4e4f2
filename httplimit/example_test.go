package httplimit_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"time"

	"github.com/cellrate/cellrate/httplimit"
)

// A policy per route, each with its own key: /login by client address, 3
// attempts at once and 1 more every 10 s; /api/ by API key, else by
// address, 100 a second; and all of /api/ together 1000 a second. The
// fourth login attempt at once is denied.
func Example() {
	lim, err := httplimit.New([]httplimit.Policy{{
		Name:       "login",
		Methods:    []string{"POST"},
		PathPrefix: "/login",
		Key:        httplimit.PeerAddr,
		Client:     httplimit.Limit{Events: 1, Period: 10 * time.Second, Burst: 3},
	}, {
		Name:       "api",
		PathPrefix: "/api/",
		Key:        httplimit.FirstKey(httplimit.HeaderKey("X-Api-Key"), httplimit.PeerAddr),
		Client:     httplimit.Limit{Events: 100, Period: time.Second, Burst: 100},
		Global:     httplimit.Limit{Events: 1000, Period: time.Second, Burst: 1000},
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

// Behind a load balancer at 10.0.0.0/8, clients are named by the address
// it appends to X-Forwarded-For; a header sent by any other peer is
// ignored.
func ExampleProxyKey() {
	key, err := httplimit.ProxyKey("X-Forwarded-For", netip.MustParsePrefix("10.0.0.0/8"))
	if err != nil {
		panic(err)
	}
	for _, remote := range []string{"10.1.2.3:5000", "203.0.113.7:5000"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		r.Header.Set("X-Forwarded-For", "1.2.3.4, 198.51.100.20")
		k, err := key(r)
		fmt.Println(remote, "->", k, err)
	}
	// Output:
	// 10.1.2.3:5000 -> 198.51.100.20 <nil>
	// 203.0.113.7:5000 -> 203.0.113.7 <nil>
}

// A client named by its address and the route together: each path has
// its own limit per address.
func ExampleJoinKeys() {
	path := func(r *http.Request) (httplimit.Key, error) { return httplimit.StringKey(r.URL.Path), nil }
	key := httplimit.JoinKeys(httplimit.PeerAddr, path)
	k, err := key(httptest.NewRequest("GET", "/items/7", nil))
	fmt.Println(k, err)
	// Output:
	// 192.0.2.1+"/items/7" <nil>
}

// A deny handler that answers in the API's own format, from the Decision:
// the limit that denied and when to retry. Uploads cost 2 of a client's
// burst of 3, so the second upload at once is denied.
func ExampleWithDenyHandler() {
	lim, err := httplimit.New([]httplimit.Policy{{
		Name:   "upload",
		Cost:   func(*http.Request) int64 { return 2 },
		Client: httplimit.Limit{Events: 1, Period: time.Second, Burst: 3},
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
