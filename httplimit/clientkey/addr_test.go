package clientkey

import (
	"math/rand/v2"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

// TestTrustAgreesWithNetip: a Proxy's trusted set holds an address
// exactly when one of its prefixes contains the address unmapped and
// without its zone, for prefixes of every length of both families
// (IPv4-mapped IPv6 prefixes included, which hold no IPv4 address) and
// addresses inside, beside and far from them.
func TestTrustAgreesWithNetip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	addr := func() netip.Addr {
		var b [16]byte
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		switch rng.IntN(4) {
		case 0:
			return netip.AddrFrom4([4]byte(b[:4]))
		case 1:
			return netip.AddrFrom16(b).WithZone("eth0")
		case 2:
			return netip.AddrFrom4([4]byte(b[:4])).Unmap() // as is
		}
		return netip.AddrFrom16(b)
	}
	for range 2000 {
		var ps []netip.Prefix
		for range 1 + rng.IntN(3) {
			a := addr().WithZone("")
			if rng.IntN(4) == 0 && a.Is4() {
				a = netip.AddrFrom16(a.As16()) // mapped
			}
			ps = append(ps, netip.PrefixFrom(a, rng.IntN(a.BitLen()+1)))
		}
		tr := newTrust(ps)
		for range 20 {
			a := addr()
			if rng.IntN(2) == 0 { // near a prefix: its address with low bits changed
				p := ps[rng.IntN(len(ps))]
				b := p.Addr().AsSlice()
				b[len(b)-1] ^= byte(rng.Uint32())
				a, _ = netip.AddrFromSlice(b)
				if rng.IntN(3) == 0 {
					a = netip.AddrFrom16(a.As16()) // mapped form of an IPv4 address
				}
			}
			want := false
			for _, p := range ps {
				want = want || p.Masked().Contains(a.Unmap().WithZone(""))
			}
			if got := tr.has(a); got != want {
				t.Fatalf("trusted %v: has(%v) = %v, netip says %v", ps, a, got, want)
			}
		}
	}
}

// TestOneHopIsTheWalk: an X-Forwarded-For of one line with at most one
// element (read without the general walk) names the client, or fails,
// exactly as the same element does when an empty line before it sends it
// through the walk.
func TestOneHopIsTheWalk(t *testing.T) {
	key := mustProxy(t, "X-Forwarded-For", loopback...)
	for _, remote := range []string{"127.0.0.1:1", "[::1]:2", "192.0.2.1:3"} {
		for _, v := range []string{"", " ", "1.2.3.4", " 1.2.3.4 ", "1.2.3.4:80", "127.0.0.9", "::1", "[::1]:8", "2001:db8::1",
			"[2001:db8::1]", "unknown", "_hidden", "1.2.3", "01.2.3.4", "x", strings.Repeat("1", 200), "\t10.0.0.1"} {
			fast := &http.Request{RemoteAddr: remote, Header: http.Header{"X-Forwarded-For": {v}}}
			slow := &http.Request{RemoteAddr: remote, Header: http.Header{"X-Forwarded-For": {"", v}}}
			kf, ef := key(fast)
			ks, es := key(slow)
			if kf != ks || (ef == nil) != (es == nil) || ef != nil && ef.Error() != es.Error() {
				t.Errorf("RemoteAddr %s, X-Forwarded-For %q: one line %v %v, through the walk %v %v", remote, v, kf, ef, ks, es)
			}
		}
	}
}

// TestTrim: trim is strings.TrimSpace, Unicode spaces and bytes past
// ASCII at either end included.
func TestTrim(t *testing.T) {
	for _, s := range []string{"", " ", "a", " a", "a ", "\ta\t", "\u00a01.2.3.4", "1.2.3.4\u00a0", "\u0085a", "a\u2003",
		"\x80a", "a\x80", "\xffa\xff", "é", "\u00a0", "a b"} {
		if got, want := trim(s), strings.TrimSpace(s); got != want {
			t.Errorf("trim(%q) = %q, strings.TrimSpace %q", s, got, want)
		}
	}
}

// TestNodeReasons: each element that names no client says why, in the
// words the default error handler answers with.
func TestNodeReasons(t *testing.T) {
	for _, tc := range []struct {
		v      string
		token  bool
		reason string
	}{
		{"", false, "an empty element"},
		{strings.Repeat("1", 128), false, "not an IP address"},
		{strings.Repeat("1", 129), false, "an element longer than 128 bytes"},
		{"unknown", false, "an unknown or obfuscated node"},
		{"_hidden", true, "an unknown or obfuscated node"},
		{"unknownx", false, "not an IP address"},
		{"[::1", false, "a malformed bracketed address"},
		{"[::1]", true, "a malformed bracketed address"},
		{"[::1]:x", false, "a malformed bracketed address"},
		{"[1.2.3.4]", false, "a malformed bracketed address"},
		{"::ffff:1.2.3.4:80", false, "not an IP address"},
		{":80", false, "not an IP address"},
		{"2001:db8::1", true, "not an IP address"},
		{"1.2.3.4:80", true, "not an IP address"},
	} {
		if a, reason := node(tc.v, tc.token); reason != tc.reason || a.IsValid() {
			t.Errorf("node(%.20q, %v) = %v %q, want %q", tc.v, tc.token, a, reason, tc.reason)
		}
	}
	for _, tc := range []struct {
		v     string
		token bool
		want  string
	}{
		{"[::1]:80", false, "::1"}, {"[2001:db8::1]", false, "2001:db8::1"}, {"1.2.3.4:80", false, "1.2.3.4"},
		{"2001:db8::1", false, "2001:db8::1"}, {"1.2.3.4", true, "1.2.3.4"},
	} {
		if a, reason := node(tc.v, tc.token); reason != "" || a.String() != tc.want {
			t.Errorf("node(%q, %v) = %v %q, want %s", tc.v, tc.token, a, reason, tc.want)
		}
	}
}
