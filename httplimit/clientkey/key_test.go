package clientkey

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/cellrate/cellrate/httplimit/internal/keypart"
	"github.com/cellrate/cellrate/limit"
)

// TestZonedTrustedProxy: a trusted proxy whose address carries a zone
// (a link-local peer) is trusted by its address, in both headers.
func TestZonedTrustedProxy(t *testing.T) {
	ll := netip.MustParsePrefix("fe80::/10")
	for _, tc := range []struct{ h, v string }{{xff, "203.0.113.9"}, {fwd, "for=203.0.113.9"}} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "[fe80::1%eth0]:80"
		r.Header.Set(tc.h, tc.v)
		if k, err := mustProxy(t, tc.h, ll)(r); err != nil || k.String() != "203.0.113.9" {
			t.Errorf("%s: %v %v, want 203.0.113.9", tc.h, k, err)
		}
		// A zoned hop inside the header is trusted by its address too.
		r.RemoteAddr = "10.0.0.1:80"
		r.Header.Set(tc.h, "203.0.113.9, fe80::2%eth1")
		if tc.h == fwd {
			r.Header.Set(tc.h, `for=203.0.113.9, for="[fe80::2%eth1]"`)
		}
		key := mustProxy(t, tc.h, ll, netip.MustParsePrefix("10.0.0.0/8"))
		if k, err := key(r); err != nil || k.String() != "203.0.113.9" {
			t.Errorf("%s, zoned hop: %v %v, want 203.0.113.9", tc.h, k, err)
		}
	}
}

// TestKeyFuncs: what Join, First and Header name, and their
// errors.
func TestKeyFuncs(t *testing.T) {
	boom := errors.New("boom")
	fail := func(*http.Request) (Key, error) { return Key{}, boom }
	none := func(*http.Request) (Key, error) { return Key{}, nil }
	path := func(r *http.Request) (Key, error) { return String(r.URL.Path), nil }
	r := httptest.NewRequest("GET", "/items", nil)
	for _, tc := range []struct {
		name string
		f    Func
		want string
		err  error
	}{
		{"join", Join(Peer, path), `192.0.2.1+"/items"`, nil},
		{"join, string first", Join(path, Peer), `"/items"+192.0.2.1`, nil},
		{"join, missing part", Join(Peer, Header("X-Api-Key")), "", ErrNoKey},
		{"join, failing part", Join(Peer, fail), "", boom},
		{"join, no key", Join(none), "", ErrNoKey},
		{"join of nothing", Join(), "", ErrNoKey},
		{"first: no header, then the address", First(Header("X-Api-Key"), Peer), "192.0.2.1", nil},
		{"first: no key passes on", First(none, path), "/items", nil},
		{"first: an error stops", First(fail, Peer), "", boom},
		{"first: none at all", First(Header("X-Api-Key")), "", ErrNoKey},
	} {
		k, err := tc.f(r)
		if k.String() != tc.want || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("%s: %q %v, want %q %v", tc.name, k, err, tc.want, tc.err)
		}
	}
	r.Header.Set("X-API-KEY", "k1")
	if k, err := First(Header("x-api-key"), Peer)(r); k != String("k1") || err != nil {
		t.Errorf("header key: %v %v", k, err)
	}
	if String("") != (Key{}) || Addr(netip.Addr{}) != (Key{}) {
		t.Error("an empty string or an invalid address is a key")
	}
}

// TestProxyRefusals: Proxy refuses what could only key every
// client by its peer, or nothing.
func TestProxyRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, h, param string
		trusted        []netip.Prefix
	}{
		{"no trusted prefix", xff, "trusted", nil},
		{"an invalid prefix", fwd, "trusted", []netip.Prefix{loopback[0], {}}},
		{"another header", "X-Real-Ip", "header", loopback},
	} {
		f, err := Proxy(tc.h, tc.trusted...)
		var pe *limit.ParamError
		if f != nil || !errors.As(err, &pe) || pe.Param != tc.param || pe.Pkg != "clientkey" {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := Proxy("x-forwarded-for", loopback...); err != nil {
		t.Errorf("a header name in lower case: %v", err)
	}
}

// TestAddr: an address key is the address unmapped and without its zone,
// an IPv6 one naming its /64; the invalid address and the empty string
// are no key.
func TestAddr(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bits     uint8
	}{
		{"192.0.2.1", "192.0.2.1", 0},
		{"::ffff:192.0.2.1", "192.0.2.1", 0},
		{"2001:db8::1", "2001:db8::1", 64},
		{"fe80::1%eth0", "fe80::1", 64},
	} {
		k := Addr(netip.MustParseAddr(tc.in))
		if k.p.Kind != keypart.Addr || k.p.Addr.String() != tc.want || k.p.Bits != tc.bits || k.String() != tc.want {
			t.Errorf("Addr(%s) = %+v, want %s /%d", tc.in, k.p, tc.want, tc.bits)
		}
	}
	if Addr(netip.Addr{}) != (Key{}) || String("") != (Key{}) || (Key{}).String() != "" {
		t.Error("an invalid address or an empty string is a key")
	}
	if k := String("a"); k.p.Kind != keypart.String || k.p.S != "a" || k.String() != "a" {
		t.Errorf("String(a) = %+v", k.p)
	}
}

// TestIPv6Prefix: the prefix applies to IPv6 addresses, alone or joined,
// and to nothing else; errors pass through; bits out of [1, 128] and a
// nil Func are refused.
func TestIPv6Prefix(t *testing.T) {
	boom := errors.New("boom")
	six := Addr(netip.MustParseAddr("2001:db8::1"))
	four := Addr(netip.MustParseAddr("192.0.2.1"))
	joined := Join(func(*http.Request) (Key, error) { return six, nil }, func(*http.Request) (Key, error) { return String("r"), nil })
	for _, tc := range []struct {
		name string
		f    Func
		bits uint8
		err  error
	}{
		{"ipv6", func(*http.Request) (Key, error) { return six, nil }, 48, nil},
		{"ipv4", func(*http.Request) (Key, error) { return four, nil }, 0, nil},
		{"string", func(*http.Request) (Key, error) { return String("x"), nil }, 0, nil},
		{"joined", joined, 48, nil},
		{"error", func(*http.Request) (Key, error) { return six, boom }, 64, boom},
	} {
		f, err := IPv6Prefix(48, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		k, err := f(nil)
		if k.p.Bits != tc.bits || err != tc.err {
			t.Errorf("%s: %+v %v, want /%d %v", tc.name, k.p, err, tc.bits, tc.err)
		}
	}
	if k, _ := joined(nil); k.p.Bits != 64 || k.String() != `2001:db8::1+"r"` {
		t.Errorf("joined: %+v %s", k.p, k)
	}
	for _, bits := range []int{1, 128} {
		if _, err := IPv6Prefix(bits, Peer); err != nil {
			t.Errorf("bits %d: %v", bits, err)
		}
	}
	for _, bits := range []int{0, 129, -1} {
		var pe *limit.ParamError
		if f, err := IPv6Prefix(bits, Peer); f != nil || !errors.As(err, &pe) || pe.Param != "bits" || pe.Pkg != "clientkey" {
			t.Errorf("bits %d: %v", bits, err)
		}
	}
	var pe *limit.ParamError
	if f, err := IPv6Prefix(64, nil); f != nil || !errors.As(err, &pe) || pe.Param != "f" {
		t.Errorf("nil Func: %v", err)
	}
}

// TestJoinAddrs: of the addresses a joined key holds, the first is its
// address part and any other is text; a present but empty header is no
// key.
func TestJoinAddrs(t *testing.T) {
	other := func(*http.Request) (Key, error) { return Addr(netip.MustParseAddr("198.51.100.1")), nil }
	k, err := Join(Peer, other)(httptest.NewRequest("GET", "/", nil))
	if err != nil || k.String() != "192.0.2.1+198.51.100.1" || k.p.Addr != netip.MustParseAddr("192.0.2.1") {
		t.Errorf("%v %v, parts %+v", k, err, k.p)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header["X-Api-Key"] = []string{"", "k"}
	if k, err := Header("X-Api-Key")(r); err != ErrNoKey || k != (Key{}) {
		t.Errorf("an empty first value: %v %v", k, err)
	}
}

// TestJoinIPv6Parts: every IPv6 address in a joined key names its prefix,
// not only the first: a client that moves within its /64 stays one
// client when its address is a second part or inside a nested Join.
func TestJoinIPv6Parts(t *testing.T) {
	by48, err := IPv6Prefix(48, Peer)
	if err != nil {
		t.Fatal(err)
	}
	u := Header("U")
	for name, tc := range map[string]struct {
		f    Func
		bits int // the prefix of the addresses that must be one client
	}{
		"second":       {Join(Peer, Peer), 64},
		"after string": {Join(u, Peer, Peer), 64},
		"nested":       {Join(Join(Peer, u), u), 64},
		"nested later": {Join(u, Join(u, Peer), Join(Peer, u)), 64},
		"both /48":     {Join(by48, by48), 48},
	} {
		key := func(addr string) Key {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = "[" + addr + "]:443"
			r.Header.Set("U", "u")
			k, err := tc.f(r)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return k
		}
		same := func(a, b Key) bool { return a.p.S == b.p.S && a.p.Cut() == b.p.Cut() }
		base := key("2001:db8:0:1::1")
		if k := key("2001:db8:0:1:ffff::2"); !same(base, k) {
			t.Errorf("%s: %s and %s, one /64, are two clients", name, base, k)
		}
		if k := key("2001:db8:1:1::1"); same(base, k) {
			t.Errorf("%s: %s and %s, two /48s, are one client", name, base, k)
		}
		if k := key("2001:db8:0:2::1"); same(base, k) != (tc.bits == 48) {
			t.Errorf("%s: %s and %s: one client %v, want %v", name, base, k, same(base, k), tc.bits == 48)
		}
	}
	if k, _ := Join(Peer, Peer)(httptest.NewRequest("GET", "/", nil)); k.String() != "192.0.2.1+192.0.2.1" {
		t.Errorf("IPv4 parts: %s", k)
	}
}

// TestCarriedIPv4: an IPv6 address that carries an IPv4 one names that
// IPv4 client, alone and in every part of a joined key, as keyed.AllowAddr
// keys it: a 6to4 host owns a /48 (65,536 /64 clients otherwise), a Teredo
// client sets random bits inside its /64.
func TestCarriedIPv4(t *testing.T) {
	u := Header("U")
	for _, c := range []struct{ a, same, other string }{
		{"2002:c000:201:1::1", "2002:c000:201:ffff::2", "2002:c000:202:1::1"},
		{"2002:c000:201::", "192.0.2.1", "::ffff:192.0.2.2"},
		{"64:ff9b::192.0.2.1", "192.0.2.1", "64:ff9b:0:0:1::c000:201"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdfe", "2001:0:4136:e378:8123:1:3fff:fdfe", "2001:0:4136:e378:8000:63bf:3fff:fdfd"},
	} {
		for name, f := range map[string]Func{"alone": Peer, "joined": Join(u, Peer, Peer)} {
			key := func(addr string) Key {
				r := httptest.NewRequest("GET", "/", nil)
				r.RemoteAddr = netip.AddrPortFrom(netip.MustParseAddr(addr), 443).String()
				r.Header.Set("U", "u")
				k, err := f(r)
				if err != nil {
					t.Fatalf("%s %s: %v", name, addr, err)
				}
				return k
			}
			base := key(c.a)
			if k := key(c.same); k != base {
				t.Errorf("%s: %s (%s) and %s (%s) are two clients", name, c.a, base, c.same, k)
			}
			if k := key(c.other); k == base {
				t.Errorf("%s: %s and %s are one client (%s)", name, c.a, c.other, k)
			}
		}
	}
}

// TestJoinNestedParts: a joined key inside a Join keeps every part, its
// strings as well as its address, whatever comes before it: clients that
// differ only in a nested part are two clients.
func TestJoinNestedParts(t *testing.T) {
	u := Header("U")
	for name, f := range map[string]Func{
		"after an address": Join(Peer, Join(Peer, u)),
		"after a string":   Join(u, Join(Peer, u)),
		"first":            Join(Join(Peer, u), Peer),
	} {
		key := func(v string) Key {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("U", v)
			k, err := f(r)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return k
		}
		if a, b := key("a"), key("b"); a == b {
			t.Errorf("%s: U=a and U=b are one client (%s)", name, a)
		}
	}
}
