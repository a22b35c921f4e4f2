package clientkey

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/cellrate/cellrate/httplimit/internal/keypart"
)

const xff, fwd = "X-Forwarded-For", "Forwarded"

func mustProxy(t testing.TB, h string, trusted ...netip.Prefix) Func {
	t.Helper()
	f, err := Proxy(h, trusted...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func TestPeer(t *testing.T) {
	cases := []struct {
		remote, want string
	}{
		{"192.0.2.1:1234", "192.0.2.1"},
		{"[2001:db8::1]:80", "2001:db8::1"},
		{"[fe80::1%eth0]:80", "fe80::1"},
		{"[::ffff:192.0.2.1]:80", "192.0.2.1"},
		{"192.0.2.1", "192.0.2.1"},
		{"", ""},
		{"@", ""},
		{"host:80", ""},
		{"1.2.3.4:99999", ""},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.remote
		k, err := Peer(r)
		var ce *clientError
		switch {
		case c.want == "" && (!errors.As(err, &ce) || ce.source != "RemoteAddr" || errors.Is(err, ErrProxyHeader)):
			t.Errorf("%q: %v, %v; want a RemoteAddr error, not ErrProxyHeader", c.remote, k, err)
		case c.want != "" && (err != nil || k.String() != c.want):
			t.Errorf("%q: %v, %v; want %s", c.remote, k, err, c.want)
		}
	}
}

func TestProxy(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	cases := []struct {
		name   string
		h      string
		remote string
		vals   []string
		want   string // "" for ErrProxyHeader
	}{
		{"untrusted peer ignores the header", xff, "192.0.2.9:1", []string{"1.2.3.4"}, "192.0.2.9"},
		{"untrusted peer ignores garbage", xff, "192.0.2.9:1", []string{"garbage,,"}, "192.0.2.9"},
		{"trusted peer, one hop", xff, "10.0.0.1:1", []string{"1.2.3.4"}, "1.2.3.4"},
		{"spoofed left part is never read", xff, "10.0.0.1:1", []string{"6.6.6.6, 1.2.3.4"}, "1.2.3.4"},
		{"garbage left of the client", xff, "10.0.0.1:1", []string{"not an ip, 1.2.3.4"}, "1.2.3.4"},
		{"two trusted hops", xff, "10.0.0.1:1", []string{"6.6.6.6, 1.2.3.4, 10.9.9.9"}, "1.2.3.4"},
		{"lines read last first", xff, "10.0.0.1:1", []string{"6.6.6.6", "1.2.3.4, 10.0.0.2"}, "1.2.3.4"},
		{"across lines", xff, "10.0.0.1:1", []string{"1.2.3.4", "10.0.0.2"}, "1.2.3.4"},
		{"all trusted: the leftmost", xff, "10.0.0.1:1", []string{"10.0.0.3, 10.0.0.2"}, "10.0.0.3"},
		{"trusted peer, no header", xff, "10.0.0.1:1", nil, "10.0.0.1"},
		{"empty line", xff, "10.0.0.1:1", []string{""}, "10.0.0.1"},
		{"ipv6 and ports", xff, "[2001:db8:ffff::1]:1", []string{"[2001:db8::7]:443"}, "2001:db8::7"},
		{"bare ipv6", xff, "10.0.0.1:1", []string{"2001:db8::7"}, "2001:db8::7"},
		{"ipv4 with port", xff, "10.0.0.1:1", []string{"1.2.3.4:5678"}, "1.2.3.4"},
		{"mapped", xff, "10.0.0.1:1", []string{"::ffff:1.2.3.4"}, "1.2.3.4"},
		{"malformed from a trusted proxy", xff, "10.0.0.1:1", []string{"1.2.3"}, ""},
		{"empty element", xff, "10.0.0.1:1", []string{"1.2.3.4,"}, ""},
		{"unknown", xff, "10.0.0.1:1", []string{"unknown"}, ""},
		{"overlong", xff, "10.0.0.1:1", []string{strings.Repeat("1", 200)}, ""},
		{"bad port", xff, "10.0.0.1:1", []string{"1.2.3.4:x"}, ""},
		{"bad brackets", xff, "10.0.0.1:1", []string{"[1.2.3.4]"}, ""},
		{"too many hops", xff, "10.0.0.1:1", []string{strings.Repeat("10.0.0.5, ", maxHops+1) + "10.0.0.5"}, ""},
		{"fwd: untrusted ignored", fwd, "192.0.2.9:1", []string{"for=1.2.3.4"}, "192.0.2.9"},
		{"fwd: one hop", fwd, "10.0.0.1:1", []string{"for=1.2.3.4;proto=https;by=10.0.0.1"}, "1.2.3.4"},
		{"fwd: case and spaces", fwd, "10.0.0.1:1", []string{"proto=http; For = 1.2.3.4"}, "1.2.3.4"},
		{"fwd: quoted ipv6 with port", fwd, "10.0.0.1:1", []string{`for="[2001:db8::17]:4711"`}, "2001:db8::17"},
		{"fwd: quoted ipv4 port", fwd, "10.0.0.1:1", []string{`for="1.2.3.4:80"`}, "1.2.3.4"},
		{"fwd: two elements", fwd, "10.0.0.1:1", []string{`for=6.6.6.6, for=1.2.3.4;by="a,b", for=10.0.0.2`}, "1.2.3.4"},
		{"fwd: comma in quotes", fwd, "10.0.0.1:1", []string{`for=1.2.3.4;host="x,y\",z"`}, "1.2.3.4"},
		{"fwd: escaped backslash", fwd, "10.0.0.1:1", []string{`for=1.2.3.4;host="x\\"`}, "1.2.3.4"},
		{"fwd: unquoted ipv6", fwd, "10.0.0.1:1", []string{"for=[2001:db8::1]"}, ""},
		{"fwd: obfuscated", fwd, "10.0.0.1:1", []string{"for=_hidden"}, ""},
		{"fwd: unknown", fwd, "10.0.0.1:1", []string{"for=unknown"}, ""},
		{"fwd: no for", fwd, "10.0.0.1:1", []string{"proto=https"}, ""},
		{"fwd: no value", fwd, "10.0.0.1:1", []string{"for"}, ""},
		{"fwd: unterminated quote", fwd, "10.0.0.1:1", []string{`for="1.2.3.4`}, ""},
		{"fwd: garbage left of the client", fwd, "10.0.0.1:1", []string{`for="oops, for=1.2.3.4`}, "1.2.3.4"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.remote
		for _, v := range c.vals {
			r.Header.Add(c.h, v)
		}
		k, err := mustProxy(t, c.h, trusted...)(r)
		var ce *clientError
		switch {
		case c.want == "" && (!errors.Is(err, ErrProxyHeader) || !errors.As(err, &ce) || ce.source != c.h || len(ce.value) > 64):
			t.Errorf("%s: %v, %v; want ErrProxyHeader from %s", c.name, k, err, c.h)
		case c.want != "" && (err != nil || k.String() != c.want):
			t.Errorf("%s: %v, %v; want %s", c.name, k, err, c.want)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = ""
	if _, err := mustProxy(t, xff, trusted...)(r); err == nil {
		t.Error("an empty RemoteAddr named a client")
	}
}

// TestProxyHuge: a header of a million bytes is walked only as far as
// the trusted hops go.
func TestProxyHuge(t *testing.T) {
	huge := strings.Repeat("9.9.9.9, ", 1<<17) + "1.2.3.4"
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "127.0.0.1:1"
	r.Header.Set("X-Forwarded-For", huge)
	k, err := mustProxy(t, xff, loopback...)(r)
	if err != nil || k.String() != "1.2.3.4" {
		t.Fatalf("%v, %v", k, err)
	}
	r.Header.Set("X-Forwarded-For", strings.Repeat("x", 1<<20))
	if _, err := mustProxy(t, xff, loopback...)(r); err == nil {
		t.Fatal("a 1 MiB element named a client")
	}
	r.Header.Del("X-Forwarded-For")
	r.Header.Set("Forwarded", strings.Repeat(`for="`, 1<<16))
	if _, err := mustProxy(t, fwd, loopback...)(r); err == nil {
		t.Fatal("unbalanced quotes named a client")
	}
}

func FuzzProxy(f *testing.F) {
	f.Add("10.0.0.1:1", "for=1.2.3.4, for=\"[::1]:8\"", "1.2.3.4, 10.0.0.2")
	f.Add("[::1]:1", `for="\\\",`, ",,,")
	f.Fuzz(func(t *testing.T, remote, fwdV, xffV string) {
		r := &http.Request{RemoteAddr: remote, Header: http.Header{"Forwarded": {fwdV}, "X-Forwarded-For": {xffV}}}
		for _, h := range []string{fwd, xff} {
			k, err := mustProxy(t, h, netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0"))(r)
			if err == nil && (k.p.Kind != keypart.Addr || !k.p.Addr.IsValid()) {
				t.Fatalf("%s: no error and no address", h)
			}
		}
	})
}

// TestParse4: the fast IPv4 parsers agree with netip on what they accept,
// and accept every dotted-decimal IPv4 address and IPv4 address and port.
func TestParse4(t *testing.T) {
	for _, s := range []string{"1.2.3.4", "0.0.0.0", "255.255.255.255", "10.0.0.1", "256.1.1.1", "01.2.3.4", "1.2.3", "1.2.3.4.5",
		"1..2.3", ".1.2.3", "1.2.3.", "", "1.2.3.4 ", "::1", "1.2.3.4%x", "00.1.1.1", "1.2.3.0", "1.2.3.00", "9999.1.1.1", "1.2.3.4a",
		"19.29.199.9", "249.99.9.0", "18446744073709551617.1.1.1"} {
		checkParse4(t, s)
		for _, port := range []string{":80", ":0", ":65535", ":65536", ":", ":x", ":+1", ":080", ":123456"} {
			checkParse4Port(t, s+port)
		}
	}
}

func checkParse4(t *testing.T, s string) {
	a, ok := parse4(s)
	want, err := netip.ParseAddr(s)
	if ok && (err != nil || a != want) || !ok && err == nil && want.Is4() {
		t.Errorf("parse4(%q) = %v %v; netip %v %v", s, a, ok, want, err)
	}
}

func checkParse4Port(t *testing.T, s string) {
	a, ok := parse4Port(s)
	want, err := netip.ParseAddrPort(s)
	if ok && (err != nil || a != want.Addr()) || !ok && err == nil && want.Addr().Is4() {
		t.Errorf("parse4Port(%q) = %v %v; netip %v %v", s, a, ok, want, err)
	}
}

func FuzzParse4(f *testing.F) {
	f.Add("1.2.3.4:80")
	f.Add("01.2.3.4")
	f.Fuzz(func(t *testing.T, s string) {
		checkParse4(t, s)
		checkParse4Port(t, s)
	})
}

// TestElems: a list header's elements, right to left across its lines,
// with commas inside a Forwarded quoted string (escaped quotes and
// backslashes included) kept in their element, empty elements kept, and
// lines that are empty skipped.
func TestElems(t *testing.T) {
	for _, tc := range []struct {
		vals      []string
		forwarded bool
		want      []string
	}{
		{[]string{"a, b,c"}, false, []string{"c", "b", "a"}},
		{[]string{",a"}, false, []string{"a", ""}},
		{[]string{"a,"}, false, []string{"", "a"}},
		{[]string{"a", " ", "", "b, c"}, false, []string{"c", "b", "a"}},
		{[]string{`for=1.2.3.4, for="a,b", for=5.6.7.8`}, true, []string{"for=5.6.7.8", `for="a,b"`, "for=1.2.3.4"}},
		{[]string{`,for=1.2.3.4`}, true, []string{"for=1.2.3.4", ""}},
		{[]string{`x="a\"b,c", d`}, true, []string{"d", `x="a\"b,c"`}},
		{[]string{`x="a\\", b`}, true, []string{"b", `x="a\\"`}},
		{[]string{`x="a\\\",b", c`}, true, []string{"c", `x="a\\\",b"`}},
		{[]string{`x="a,b"`, `c`}, true, []string{"c", `x="a,b"`}},
		{[]string{`for=1.2.3.4, x="a\\", b`}, true, []string{"b", `x="a\\"`, "for=1.2.3.4"}},
		{[]string{`for=1.2.3.4, x="a\",b", c`}, true, []string{"c", `x="a\",b"`, "for=1.2.3.4"}},
		{[]string{`for=1.2.3.4, x="\\\"", c`}, true, []string{"c", `x="\\\""`, "for=1.2.3.4"}},
	} {
		it := elems{vals: tc.vals, forwarded: tc.forwarded}
		var got []string
		for e, ok := it.next(); ok; e, ok = it.next() {
			got = append(got, e)
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("%q (forwarded %v): %q, want %q", tc.vals, tc.forwarded, got, tc.want)
		}
	}
}

// TestForwardedFor: the for= parameter of a Forwarded element, quoted or
// not, among others (a semicolon in a quoted value is no cut); or why
// there is none.
func TestForwardedFor(t *testing.T) {
	for _, tc := range []struct{ e, want, reason string }{
		{"for=1.2.3.4", "1.2.3.4", ""},
		{`by="a;b";for=1.2.3.4`, "1.2.3.4", ""},
		{`by="a\";b";for=1.2.3.4`, "1.2.3.4", ""},
		{`by="a\\";for=1.2.3.4`, "1.2.3.4", ""},
		{`FOR="[::1]:80"`, "::1", ""},
		{`for=""`, "", "an empty element"},
		{`for="`, "", "not an IP address"},
		{`for="1.2.3.4`, "", "not an IP address"},
		{"for", "", "a parameter without a value"},
		{"proto=https", "", "no for= parameter"},
		{"", "", "no for= parameter"},
		{"for=unknown", "", "an unknown or obfuscated node"},
	} {
		a, reason := forwardedFor(tc.e)
		if reason != tc.reason || tc.want != "" && a.String() != tc.want || tc.want == "" && a.IsValid() {
			t.Errorf("%q: %v %q, want %q %q", tc.e, a, reason, tc.want, tc.reason)
		}
	}
}
