package keypart

import (
	"net/netip"
	"testing"
)

// TestCut: an IPv6 address cut to its prefix is netip's masked prefix
// address, for every prefix length; an IPv4 address is itself; AddrBytes
// gives 4 bytes for IPv4 and the cut address's 16 for IPv6.
func TestCut(t *testing.T) {
	a6 := netip.MustParseAddr("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff")
	for bits := 1; bits <= 128; bits++ {
		k := Key{Addr: a6, Kind: Addr, Bits: uint8(bits)}
		want := netip.PrefixFrom(a6, bits).Masked().Addr()
		if got := k.Cut(); got != want {
			t.Fatalf("/%d: cut %v, want %v", bits, got, want)
		}
		if b, n := k.AddrBytes(); n != 16 || b != want.As16() {
			t.Fatalf("/%d: bytes %x (%d), want %x", bits, b, n, want.As16())
		}
	}
	a4 := netip.MustParseAddr("192.0.2.255")
	k := Key{Addr: a4, Kind: Addr}
	if b, n := k.AddrBytes(); k.Cut() != a4 || n != 4 || [4]byte(b[:4]) != a4.As4() || [12]byte(b[4:]) != [12]byte{} {
		t.Fatalf("IPv4: cut %v, bytes %x (%d)", k.Cut(), b, n)
	}
}
