package keyed

import (
	"encoding/binary"
	"hash/maphash"
	"net/netip"

	"github.com/cellrate/cellrate/limit"
)

// Keys come in three kinds, each hashed under a seed of its own, so keys of
// different kinds never name the same limiter: byte strings (a string and
// a []byte with the same bytes are the same key), numbers, and addresses.
// The plain forms read the table's clock; the ...At forms take now.
const (
	bytesKind = iota
	uint64Kind
	addrKind
)

// Allow reports whether one unit may be taken for key now, and takes it if
// so.
func (t *Table) Allow(key string) bool {
	return t.allow1(t.strHash(key), t.now(), true)
}

// AllowAt reports whether one unit may be taken for key at now, and takes
// it if so.
func (t *Table) AllowAt(key string, now int64) bool {
	return t.allow1(t.strHash(key), now, false)
}

// AllowN is AllowNAt at the clock's now.
func (t *Table) AllowN(key string, n int64) (limit.Result, error) {
	return t.decide(t.strHash(key), t.now(), n, false, true)
}

// AllowNAt takes n units for key at now if all n are available. It
// returns limit.ErrNegativeCost or limit.ErrCostExceedsBurst for an n no
// limiter of the table can admit, and ErrFull for a key refused a slot.
func (t *Table) AllowNAt(key string, now, n int64) (limit.Result, error) {
	return t.decide(t.strHash(key), now, n, false, false)
}

// AllowBytes is Allow for a key given as bytes; it does not allocate or
// keep key.
func (t *Table) AllowBytes(key []byte) bool {
	return t.allow1(t.bytesHash(key), t.now(), true)
}

// AllowBytesAt is AllowAt for a key given as bytes.
func (t *Table) AllowBytesAt(key []byte, now int64) bool {
	return t.allow1(t.bytesHash(key), now, false)
}

// AllowUint64 is Allow for a numeric key (a user id, say): a kind of its
// own, never the limiter of a string.
func (t *Table) AllowUint64(key uint64) bool { return t.allow1(t.hash64(key), t.now(), true) }

// AllowUint64At is AllowAt for a numeric key.
func (t *Table) AllowUint64At(key uint64, now int64) bool {
	return t.allow1(t.hash64(key), now, false)
}

// AllowAddr is Allow for a client address, a kind of its own: an IPv4
// address is its own key, and so is an IPv6 address that carries it
// (IPv4-mapped, 6to4's 2002::/16, whose /48 one IPv4 host owns, Teredo's
// 2001::/32 and NAT64's 64:ff9b::/96); another IPv6 address is keyed by
// its leading bits, 64 unless WithIPv6Prefix set another length, since one
// client usually owns a whole /64. The zone is ignored. The invalid Addr
// is one key.
func (t *Table) AllowAddr(addr netip.Addr) bool {
	return t.allow1(t.hashAddr(addr), t.now(), true)
}

// AllowAddrAt is AllowAt for a client address (see AllowAddr).
func (t *Table) AllowAddrAt(addr netip.Addr, now int64) bool {
	return t.allow1(t.hashAddr(addr), now, false)
}

// RemainingAt returns the whole units key could take at now: its
// limiter's remaining units, those of a fresh limiter for a key the table
// does not hold. It changes nothing and is not counted in Stats.
func (t *Table) RemainingAt(key string, now int64) int64 {
	r, _ := t.decide(t.strHash(key), now, 0, false, false)
	return r.Remaining
}

// The hashes of the three kinds. The zero Table has no seeds (maphash
// panics on a zero one) and denies every key: any hash will do.

func (t *Table) strHash(key string) uint64 {
	if t.groups == 0 {
		return 0
	}
	return maphash.String(t.seeds[bytesKind], key)
}

func (t *Table) bytesHash(key []byte) uint64 {
	if t.groups == 0 {
		return 0
	}
	return maphash.Bytes(t.seeds[bytesKind], key)
}

func (t *Table) hash64(key uint64) uint64 {
	if t.groups == 0 {
		return 0
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], key)
	return maphash.Bytes(t.seeds[uint64Kind], b[:])
}

// hashAddr hashes 4 bytes for IPv4 and 16 (the prefix, zero beyond it)
// for IPv6, so no IPv4 address shares a key with an IPv6 prefix.
func (t *Table) hashAddr(addr netip.Addr) uint64 {
	if t.groups == 0 {
		return 0
	}
	seed := t.seeds[addrKind]
	addr = embedded4(addr.Unmap())
	switch {
	case !addr.IsValid():
		return maphash.Bytes(seed, nil)
	case addr.Is4():
		b := addr.As4()
		return maphash.Bytes(seed, b[:])
	}
	b := addr.As16()
	full, part := t.v6bits/8, t.v6bits%8
	if full < 16 {
		b[full] &= ^byte(0xff >> part)
		clear(b[full+1:])
	}
	return maphash.Bytes(seed, b[:])
}

// embedded4 returns the IPv4 address an IPv6 one carries by a standard
// translation, else addr: a 6to4 address (2002:V4ADDR::/48, a /48 that one
// IPv4 host owns), a Teredo one (2001::/32, the client's public IPv4
// address inverted in its last 32 bits, with random flag bits in its /64),
// and one of NAT64's well-known prefix (64:ff9b::/96, an IPv4 client seen
// through a translator).
func embedded4(addr netip.Addr) netip.Addr {
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
