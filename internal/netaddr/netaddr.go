// Package netaddr names the client behind an address the way every
// limiter keyed by address must agree on: an IPv6 address that carries an
// IPv4 one by a standard translation is that IPv4 address, since a 6to4
// host owns a whole /48 (65,536 /64s) and a Teredo client sets random bits
// inside its /64, so keying them by a prefix would give one host many
// keys.
package netaddr

import "net/netip"

// Carried4 returns the IPv4 address addr carries by a standard
// translation, else addr: a 6to4 address (2002:V4ADDR::/48, a /48 that one
// IPv4 host owns), a Teredo one (2001::/32, the client's public IPv4
// address inverted in its last 32 bits, with random flag bits in its /64),
// and one of NAT64's well-known prefix (64:ff9b::/96, an IPv4 client seen
// through a translator). An IPv4-mapped address is left to the caller's
// Unmap.
func Carried4(addr netip.Addr) netip.Addr {
	if !addr.Is6() {
		return addr
	}
	b := addr.As16()
	switch {
	case b[0] == 0x20 && b[1] == 0x02:
		return netip.AddrFrom4([4]byte(b[2:6]))
	case b[0] == 0x20 && b[1] == 0x01 && b[2]|b[3] == 0:
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
	case [12]byte(b[:12]) == nat64:
		return netip.AddrFrom4([4]byte(b[12:]))
	}
	return addr
}

// nat64 is the well-known NAT64 prefix, 64:ff9b::/96.
var nat64 = [12]byte{0x00, 0x64, 0xff, 0x9b}
