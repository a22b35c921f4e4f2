package clientkey

import (
	"math/rand/v2"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/cellrate/cellrate/httplimit/internal/keypart"
)

// refTrusted is the trusted check as netip states it: a prefix contains
// the address unmapped and without its zone.
func refTrusted(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Masked().Contains(a.Unmap().WithZone("")) {
			return true
		}
	}
	return false
}

// refNode reads an X-Forwarded-For element with netip alone: an address,
// an IPv4 address or bracketed IPv6 address with a port, or a bracketed
// IPv6 address; at most 128 bytes.
func refNode(e string) (netip.Addr, bool) {
	if e == "" || len(e) > maxElem {
		return netip.Addr{}, false
	}
	if a, err := netip.ParseAddr(e); err == nil {
		return a, true
	}
	if ap, err := netip.ParseAddrPort(e); err == nil {
		return ap.Addr(), true
	}
	if len(e) > 2 && e[0] == '[' && e[len(e)-1] == ']' {
		if a, err := netip.ParseAddr(e[1 : len(e)-1]); err == nil && a.Is6() {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// refXFF is Proxy("X-Forwarded-For", ps...) written plainly: split
// every line, walk right to left from the peer while it is trusted.
func refXFF(ps []netip.Prefix, remote string, lines []string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(remote)
	if ap, err2 := netip.ParseAddrPort(remote); err2 == nil {
		a, err = ap.Addr(), nil
	}
	if err != nil {
		return netip.Addr{}, false
	}
	var es []string // right to left
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) == "" {
			continue
		}
		parts := strings.Split(lines[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			es = append(es, strings.TrimSpace(parts[j]))
		}
	}
	for hop := 0; refTrusted(ps, a) && hop < len(es); hop++ {
		if hop == maxHops {
			return netip.Addr{}, false
		}
		var ok bool
		if a, ok = refNode(es[hop]); !ok {
			return netip.Addr{}, false
		}
	}
	return a.Unmap().WithZone(""), true
}

// trustSets are trusted sets at the edges: everything (/0), one address
// (/32, /128), a mapped prefix (which holds no IPv4 address), a link-local
// prefix (zoned addresses).
var trustSets = [][]netip.Prefix{
	loopback,
	{netip.MustParsePrefix("0.0.0.0/0")},
	{netip.MustParsePrefix("::/0")},
	{netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("2001:db8::1/128")},
	{netip.MustParsePrefix("::ffff:10.0.0.0/104"), netip.MustParsePrefix("fe80::/10")},
	{netip.MustParsePrefix("10.0.0.0/31"), netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")},
}

// checkXFF compares Proxy with refXFF on one request, for every
// trusted set.
func checkXFF(t *testing.T, remote string, lines []string) {
	for _, ps := range trustSets {
		key := mustProxy(t, xff, ps...)
		r := &http.Request{RemoteAddr: remote, Header: http.Header{xff: lines}}
		k, err := key(r)
		want, ok := refXFF(ps, remote, lines)
		if ok != (err == nil) || ok && (k.p.Kind != keypart.Addr || k.p.Addr != want) {
			t.Fatalf("trusted %v, RemoteAddr %q, X-Forwarded-For %q: got %v %v, the plain walk %v %v", ps, remote, lines, k, err, want, ok)
		}
	}
}

var xffElems = []string{"", " ", "1.2.3.4", "10.0.0.1", "10.0.0.0", "10.0.0.2", "127.0.0.1", "::1", "2001:db8::1", "2001:db8::2",
	"::ffff:10.0.0.1", "::ffff:1.2.3.4", "[::1]", "[::1]:80", "[::ffff:10.0.0.1]:8", "1.2.3.4:80", "10.0.0.1:65536",
	"fe80::1%eth0", "[fe80::1%eth0]:9", "fe80::2", "[1.2.3.4]:80", "1.2.3.4%x", "unknown", "_x", "01.2.3.4", "1.2.3",
	"\t1.2.3.4 ", "1.2.3.4 1.2.3.5", "[::1", "::1]", "[::1]x", "0.0.0.0", "255.255.255.255", "::", "x"}

var remotes = []string{"127.0.0.1:1", "[::1]:2", "10.0.0.1:3", "10.0.0.0", "10.0.0.2:4", "[::ffff:10.0.0.1]:5",
	"[::ffff:127.0.0.1]:6", "[fe80::1%eth0]:7", "2001:db8::1", "[2001:db8::1]:8", "1.2.3.4:9", "@", "", "[::ffff:10.0.0.0]:1"}

// TestXFFAgreesWithPlainWalk: Proxy's X-Forwarded-For fast paths (one
// element without the walk, IPv4 peers as masked words, untrusted peers
// not reading the header) name the same client, or fail alike, as a plain
// walk over netip, on random headers of several lines.
func TestXFFAgreesWithPlainWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	runs := 4000
	if testing.Short() {
		runs = 800
	}
	for range runs {
		lines := make([]string, 1+rng.IntN(3))
		for i := range lines {
			var b strings.Builder
			for k := range rng.IntN(4) {
				if k > 0 {
					b.WriteString([]string{",", ", ", " ,", ",,"}[rng.IntN(4)])
				}
				b.WriteString(xffElems[rng.IntN(len(xffElems))])
			}
			lines[i] = b.String()
		}
		checkXFF(t, remotes[rng.IntN(len(remotes))], lines)
	}
}

func FuzzXFFAgreesWithPlainWalk(f *testing.F) {
	f.Add("10.0.0.1:1", "1.2.3.4, 10.0.0.1\n::ffff:10.0.0.1")
	f.Add("[::ffff:10.0.0.1]:1", "fe80::1%eth0")
	f.Fuzz(func(t *testing.T, remote, header string) {
		checkXFF(t, remote, strings.Split(header, "\n"))
	})
}

// fwdForms are X-Forwarded-For elements and the same node as a Forwarded
// element (quoted where RFC 7239 needs it, with other parameters around).
var fwdForms = [][2]string{
	{"1.2.3.4", "for=1.2.3.4"}, {"10.0.0.1", "For=10.0.0.1;proto=https"}, {"127.0.0.1", "by=10.0.0.9;for=127.0.0.1"},
	{"1.2.3.4:80", `for="1.2.3.4:80"`}, {"[::1]:80", `for="[::1]:80"`}, {"2001:db8::1", `for="[2001:db8::1]"`},
	{"::ffff:10.0.0.1", `for="[::ffff:10.0.0.1]"`}, {"[fe80::1%eth0]:9", `for="[fe80::1%eth0]:9";host="a,b"`},
	{"unknown", "for=unknown"}, {"x", "for=x"}, {"01.2.3.4", "for=01.2.3.4"}, {"10.0.0.2", ` for = 10.0.0.2 `},
}

// TestForwardedAgreesWithXFF: a Forwarded header names the same client as
// the X-Forwarded-For header of the same nodes, or fails alike, for every
// trusted set and peer, on random lines: the Forwarded layer (quotes,
// parameters, its comma and semicolon cuts) adds nothing to the walk.
func TestForwardedAgreesWithXFF(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	runs := 3000
	if testing.Short() {
		runs = 600
	}
	for range runs {
		n := 1 + rng.IntN(2)
		xl, fl := make([]string, n), make([]string, n)
		for i := range n {
			var xb, fb strings.Builder
			for k := range 1 + rng.IntN(4) {
				if k > 0 {
					xb.WriteString(", ")
					fb.WriteString(", ")
				}
				f := fwdForms[rng.IntN(len(fwdForms))]
				xb.WriteString(f[0])
				fb.WriteString(f[1])
			}
			xl[i], fl[i] = xb.String(), fb.String()
		}
		remote := remotes[rng.IntN(len(remotes))]
		for _, ps := range trustSets {
			xk, xe := mustProxy(t, xff, ps...)(&http.Request{RemoteAddr: remote, Header: http.Header{xff: xl}})
			fk, fe := mustProxy(t, fwd, ps...)(&http.Request{RemoteAddr: remote, Header: http.Header{fwd: fl}})
			if xk != fk || (xe == nil) != (fe == nil) {
				t.Fatalf("trusted %v, RemoteAddr %q: X-Forwarded-For %q gives %v %v, Forwarded %q gives %v %v", ps, remote, xl, xk, xe, fl, fk, fe)
			}
		}
	}
}
