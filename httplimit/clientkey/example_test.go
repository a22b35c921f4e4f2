package clientkey_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"time"

	"github.com/cellrate/cellrate/httplimit"
	"github.com/cellrate/cellrate/httplimit/clientkey"
)

// Behind a load balancer at 10.0.0.0/8, clients are named by the address
// it appends to X-Forwarded-For; a header sent by any other peer is
// ignored.
func ExampleProxy() {
	key, err := clientkey.Proxy("X-Forwarded-For", netip.MustParsePrefix("10.0.0.0/8"))
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
func ExampleJoin() {
	path := func(r *http.Request) (clientkey.Key, error) { return clientkey.String(r.URL.Path), nil }
	key := clientkey.Join(clientkey.Peer, path)
	k, err := key(httptest.NewRequest("GET", "/items/7", nil))
	fmt.Println(k, err)
	// Output:
	// 192.0.2.1+"/items/7" <nil>
}

// A request is named by its API key, else by its address.
func ExampleFirst() {
	key := clientkey.First(clientkey.Header("X-Api-Key"), clientkey.Peer)
	r := httptest.NewRequest("GET", "/", nil)
	k, _ := key(r)
	fmt.Println(k)
	r.Header.Set("X-Api-Key", "k-42")
	k, _ = key(r)
	fmt.Println(k)
	// Output:
	// 192.0.2.1
	// k-42
}

// Clients named by their /48 (one site) instead of their /64: a second
// address of the site is the same client, and its limit of one request
// an hour is spent.
func ExampleIPv6Prefix() {
	key, err := clientkey.IPv6Prefix(48, clientkey.Peer)
	if err != nil {
		panic(err)
	}
	lim, err := httplimit.New([]httplimit.Policy{{Name: "site", Key: key, Client: httplimit.Rate(1, time.Hour, 1)}})
	if err != nil {
		panic(err)
	}
	h := lim.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, remote := range []string{"[2001:db8:0:1::1]:80", "[2001:db8:0:2::1]:80", "[2001:db8:1::1]:80"} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		h.ServeHTTP(w, r)
		fmt.Println(remote, w.Code)
	}
	// Output:
	// [2001:db8:0:1::1]:80 200
	// [2001:db8:0:2::1]:80 429
	// [2001:db8:1::1]:80 200
}
