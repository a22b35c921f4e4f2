// Package keypart is the inside of a clientkey.Key, shared by package
// clientkey, which makes keys, and package httplimit, which limits by
// them: a Key of package clientkey is a struct of one field of this type,
// so the two have one layout and httplimit reads a key's parts without
// clientkey exporting them.
package keypart

import "net/netip"

// Kind is what names a client: an address, a string, or several joined.
type Kind uint8

const (
	None   Kind = iota // the zero key: no client
	Addr               // Addr is an address, unmapped and without a zone
	String             // S is a string, not empty
	Joined             // Addr (if valid) is the first address part; S the rest
)

// Key is a client's key: its kind, its parts, and the leading bits of an
// IPv6 address that name the client (Bits, in [1, 128]).
type Key struct {
	Addr netip.Addr
	S    string
	Kind Kind
	Bits uint8
}

// Cut returns the address that names the client: an IPv4 address as it
// is, an IPv6 one with the bits past its prefix cleared. It inlines, so
// that the common IPv4 key costs no call.
func (k *Key) Cut() netip.Addr {
	if k.Addr.Is4() || k.Bits >= 128 {
		return k.Addr
	}
	return k.cut6()
}

func (k *Key) cut6() netip.Addr { return netip.AddrFrom16(k.Bytes16()) }

// Bytes16 returns the IPv6 address's 16 bytes, zero past the prefix.
func (k *Key) Bytes16() [16]byte {
	b := k.Addr.As16()
	full, part := int(k.Bits)/8, k.Bits%8
	if full < 16 {
		b[full] &= ^byte(0xff >> part)
		clear(b[full+1:])
	}
	return b
}

// AddrBytes returns the address that names the client as 4 bytes for
// IPv4 and 16 for IPv6 (zero past the prefix), so no IPv4 address hashes
// as an IPv6 prefix.
func (k *Key) AddrBytes() ([16]byte, int) {
	if k.Addr.Is4() {
		b4 := k.Addr.As4()
		var b [16]byte
		copy(b[:], b4[:])
		return b, 4
	}
	return k.Bytes16(), 16
}
