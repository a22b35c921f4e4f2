package clientkey

import (
	"encoding/binary"
	"net/netip"
	"strings"
)

// node parses an address, with or without a port: "192.0.2.1",
// "192.0.2.1:80", "2001:db8::1" (X-Forwarded-For only), "[2001:db8::1]",
// "[2001:db8::1]:80". token is true for an unquoted Forwarded value, which
// cannot hold an IPv6 address or a port (they need quotes).
func node(v string, token bool) (netip.Addr, string) {
	if a, ok := parse4(v); ok {
		return a, ""
	}
	switch {
	case v == "":
		return netip.Addr{}, "an empty element"
	case len(v) > maxElem:
		return netip.Addr{}, "an element longer than 128 bytes"
	case v == "unknown" || v[0] == '_':
		return netip.Addr{}, "an unknown or obfuscated node"
	}
	if v[0] == '[' {
		end := strings.IndexByte(v, ']')
		if end < 0 || token || (end+1 < len(v) && !validPort(v[end+1:])) {
			return netip.Addr{}, "a malformed bracketed address"
		}
		a, err := netip.ParseAddr(v[1:end])
		if err != nil || !a.Is6() {
			return netip.Addr{}, "a malformed bracketed address"
		}
		return a, ""
	}
	if a, err := netip.ParseAddr(v); err == nil && (a.Is4() || !token) {
		return a, ""
	}
	if i := strings.LastIndexByte(v, ':'); i > 0 && !token && validPort(v[i:]) {
		if a, err := netip.ParseAddr(v[:i]); err == nil && a.Is4() {
			return a, ""
		}
	}
	return netip.Addr{}, "not an IP address"
}

// trim is strings.TrimSpace without its call when there is nothing to
// trim, as in most elements.
func trim(s string) string {
	if s == "" || s[0] > ' ' && s[len(s)-1] > ' ' && s[0] < 0x80 && s[len(s)-1] < 0x80 {
		return s
	}
	return strings.TrimSpace(s)
}

// parse4 parses a dotted-decimal IPv4 address as netip.ParseAddr does
// (four decimal fields in [0, 255], no leading zeros), faster; ok is
// false for anything else, which the caller then gives to netip.
func parse4(s string) (netip.Addr, bool) {
	ip, n := scan4(s)
	if n == 0 || n != len(s) {
		return netip.Addr{}, false
	}
	return netip.AddrFrom4(ip), true
}

// parse4Port parses "a.b.c.d:port" (the RemoteAddr of an IPv4 peer) as
// netip.ParseAddrPort does, faster; ok is false for anything else.
func parse4Port(s string) (netip.Addr, bool) {
	ip, n := scan4(s)
	if n == 0 || !validPort(s[n:]) {
		return netip.Addr{}, false
	}
	return netip.AddrFrom4(ip), true
}

// scan4 reads a dotted-decimal IPv4 address at the start of s and
// returns it and its length, or a length of 0 if s does not start with
// one. Each field is a digit, or two or three without a leading zero.
func scan4(s string) ([4]byte, int) {
	var ip [4]byte
	i := 0
	for f := range 4 {
		if f > 0 {
			if i >= len(s) || s[i] != '.' {
				return ip, 0
			}
			i++
		}
		if i >= len(s) || s[i]-'0' > 9 {
			return ip, 0
		}
		v := uint(s[i] - '0')
		i++
		for k := 0; k < 2 && v != 0 && i < len(s) && s[i]-'0' <= 9; k++ {
			v = v*10 + uint(s[i]-'0')
			i++
		}
		if v > 255 {
			return ip, 0
		}
		ip[f] = byte(v)
	}
	return ip, i
}

// validPort reports whether p is ":" and a port number.
func validPort(p string) bool {
	if len(p) < 2 || len(p) > 6 || p[0] != ':' {
		return false
	}
	n := 0
	for i := 1; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
		n = n*10 + int(p[i]-'0')
	}
	return n <= 65535
}

// trust is a Proxy key's trusted prefixes, the IPv4 ones as masked 32-bit
// words, so that the common check of an IPv4 peer is a few instructions.
type trust struct {
	v4 []net4
	v6 []netip.Prefix
}

type net4 struct{ ip, mask uint32 }

func newTrust(ps []netip.Prefix) trust {
	var t trust
	for _, p := range ps {
		p = p.Masked()
		if p.Addr().Is4() {
			t.v4 = append(t.v4, net4{ip: word4(p.Addr()), mask: ^uint32(0) << (32 - p.Bits())}) // 0 for /0
			continue
		}
		t.v6 = append(t.v6, p)
	}
	return t
}

// word4 is an IPv4 address as a big-endian 32-bit word.
func word4(a netip.Addr) uint32 {
	b := a.As4()
	return binary.BigEndian.Uint32(b[:])
}

// has reports whether a, unmapped and without its zone, is in a trusted
// prefix (a Prefix never contains a zoned address, nor an IPv6 one an
// IPv4 address).
func (t *trust) has(a netip.Addr) bool {
	if a.Is4() {
		return t.has4(word4(a))
	}
	return t.has6(a)
}

func (t *trust) has4(w uint32) bool {
	for _, n := range t.v4 {
		if w&n.mask == n.ip {
			return true
		}
	}
	return false
}

func (t *trust) has6(a netip.Addr) bool {
	if a.Is4In6() {
		return t.has4(word4(a.Unmap()))
	}
	a = a.WithZone("")
	for _, p := range t.v6 {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
