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

// Each client may make 2 requests at once and 1 more a second; all
// clients together 100 a second. The third request at once is denied.
func Example() {
	lim, err := httplimit.New([]httplimit.Policy{{
		Name:   "perip",
		Client: httplimit.Limit{Events: 1, Period: time.Second, Burst: 2},
		Global: httplimit.Limit{Name: "global", Events: 100, Period: time.Second, Burst: 100},
	}})
	if err != nil {
		panic(err)
	}
	h := lim.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))
	for range 3 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil)) // from 192.0.2.1:1234
		fmt.Printf("%d %s Retry-After=%q\n", w.Code, w.Header().Get("RateLimit-Policy"), w.Header().Get("Retry-After"))
	}
	// Output:
	// 200 "perip";q=2;w=2, "global";q=100;w=1 Retry-After=""
	// 200 "perip";q=2;w=2, "global";q=100;w=1 Retry-After=""
	// 429 "perip";q=2;w=2, "global";q=100;w=1 Retry-After="1"
}

// Behind a load balancer at 10.0.0.0/8, clients are named by the address
// it appends to X-Forwarded-For; a header sent by any other peer is
// ignored.
func ExampleProxyKey() {
	key := httplimit.ProxyKey(httplimit.XForwardedFor, netip.MustParsePrefix("10.0.0.0/8"))
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
