package httplimit

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/cellrate/cellrate/httplimit/clientkey"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
)

// TestDefaultErrorStatus: the default error handler answers a proxy
// header that names no client (clientkey.ErrProxyHeader, wrapped or not)
// 400 with its reason, no key 400, a cost above a burst 413, a full
// table 503, and an unparsable RemoteAddr, the server's fault, 500; and
// it never lets a request through.
func TestDefaultErrorStatus(t *testing.T) {
	key := mustProxy(t, xff, loopback...)
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "127.0.0.1:1"
	r.Header.Set(xff, "junk")
	_, hdr := key(r)
	r.RemoteAddr = "@"
	_, remote := key(r)
	cases := []struct {
		err  error
		code int
		body string
	}{
		{hdr, 400, "Bad Request: client address: not an IP address\n"},
		{fmt.Errorf("key: %w", hdr), 400, "Bad Request: client address: not an IP address\n"},
		{remote, 500, "Internal Server Error\n"},
		{clientkey.ErrNoKey, 400, "Bad Request: no client key\n"},
		{clientkey.ErrProxyHeader, 400, "Bad Request: client address: unreadable proxy header\n"},
		{limit.ErrCostExceedsBurst, 413, "Content Too Large: request cost exceeds the limit\n"},
		{keyed.ErrFull, 503, "Service Unavailable: too many clients\n"},
		{errors.New("boom"), 500, "Internal Server Error\n"},
	}
	for _, c := range cases {
		w := httptest.NewRecorder()
		if defaultError(w, httptest.NewRequest("GET", "/", nil), c.err) {
			t.Errorf("%v: let through", c.err)
		}
		if w.Code != c.code || w.Body.String() != c.body {
			t.Errorf("%v: %d %q, want %d %q", c.err, w.Code, w.Body.String(), c.code, c.body)
		}
	}
}

// TestKeyParts: httplimit reads a clientkey.Key's parts as clientkey
// made them, for every kind.
func TestKeyParts(t *testing.T) {
	a6 := netip.MustParseAddr("2001:db8::1")
	j, err := clientkey.Join(func(*http.Request) (clientkey.Key, error) { return clientkey.Addr(a6), nil },
		func(*http.Request) (clientkey.Key, error) { return clientkey.String("r"), nil })(nil)
	if err != nil {
		t.Fatal(err)
	}
	a4 := clientkey.Addr(netip.MustParseAddr("192.0.2.1"))
	s := clientkey.String("k")
	six := clientkey.Addr(a6)
	for _, tc := range []struct {
		k    clientkey.Key
		kind uint8
		addr netip.Addr
		s    string
	}{
		{clientkey.Key{}, 0, netip.Addr{}, ""},
		{a4, 1, netip.MustParseAddr("192.0.2.1"), ""},
		{six, 1, a6, ""},
		{s, 2, netip.Addr{}, "k"},
		{j, 3, a6, "\x00+\"r\""},
	} {
		p := parts(&tc.k)
		if uint8(p.Kind) != tc.kind || p.Addr != tc.addr || p.S != tc.s {
			t.Errorf("%v: parts %+v", tc.k, *p)
		}
	}
	if p := parts(&six); p.Bits != 64 || p.Cut() != netip.MustParseAddr("2001:db8::") {
		t.Errorf("an IPv6 key is its /64: %+v, cut %v", *p, p.Cut())
	}
}
