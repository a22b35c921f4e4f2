package keyed

import (
	"encoding/binary"
	"hash/maphash"
	"net/netip"

	"github.com/cellrate/cellrate/limit"
)

// A key is its bytes: a string, a []byte with the same bytes and a uint64
// whose 8 little-endian bytes they are name the same limiter. The plain
// forms are shorthand for the ...At forms at the table's clock.

// Allow reports whether one unit may be taken for key now, and takes it if so.
func (t *Table) Allow(key string) bool { return t.AllowAt(key, t.clock()) }

// AllowAt reports whether one unit may be taken for key at now, and takes
// it if so.
func (t *Table) AllowAt(key string, now int64) bool {
	return t.allow1(maphash.String(t.seed, key), now)
}

// AllowN is AllowNAt at the clock's now.
func (t *Table) AllowN(key string, n int64) (limit.Result, error) {
	return t.AllowNAt(key, t.clock(), n)
}

// AllowNAt takes n units for key at now if all n are available. It
// returns limit.ErrNegativeCost or limit.ErrCostExceedsBurst for an n no
// limiter of the table can admit, and ErrFull for a new key refused by the
// Refuse policy.
func (t *Table) AllowNAt(key string, now, n int64) (limit.Result, error) {
	return t.decide(maphash.String(t.seed, key), now, n, false)
}

// AllowBytes is Allow for a key given as bytes; it does not allocate or
// keep key.
func (t *Table) AllowBytes(key []byte) bool { return t.AllowBytesAt(key, t.clock()) }

// AllowBytesAt is AllowAt for a key given as bytes.
func (t *Table) AllowBytesAt(key []byte, now int64) bool {
	return t.allow1(maphash.Bytes(t.seed, key), now)
}

// AllowNBytes is AllowN for a key given as bytes.
func (t *Table) AllowNBytes(key []byte, n int64) (limit.Result, error) {
	return t.AllowNBytesAt(key, t.clock(), n)
}

// AllowNBytesAt is AllowNAt for a key given as bytes.
func (t *Table) AllowNBytesAt(key []byte, now, n int64) (limit.Result, error) {
	return t.decide(maphash.Bytes(t.seed, key), now, n, false)
}

// AllowUint64 is Allow for a numeric key (a user id, say).
func (t *Table) AllowUint64(key uint64) bool { return t.AllowUint64At(key, t.clock()) }

// AllowUint64At is AllowAt for a numeric key.
func (t *Table) AllowUint64At(key uint64, now int64) bool {
	return t.allow1(t.hash64(key), now)
}

// AllowNUint64 is AllowN for a numeric key.
func (t *Table) AllowNUint64(key uint64, n int64) (limit.Result, error) {
	return t.AllowNUint64At(key, t.clock(), n)
}

// AllowNUint64At is AllowNAt for a numeric key.
func (t *Table) AllowNUint64At(key uint64, now, n int64) (limit.Result, error) {
	return t.decide(t.hash64(key), now, n, false)
}

// AllowAddr is Allow for a client address: an IPv4 address (or an
// IPv4-mapped IPv6 one) is its own key; an IPv6 address is keyed by its
// leading bits, 64 unless WithIPv6Prefix set another length, since one
// client usually owns a whole /64. The zone is ignored. The invalid Addr
// is the key of no bytes, as the empty string.
func (t *Table) AllowAddr(addr netip.Addr) bool { return t.AllowAddrAt(addr, t.clock()) }

// AllowAddrAt is AllowAt for a client address (see AllowAddr).
func (t *Table) AllowAddrAt(addr netip.Addr, now int64) bool {
	return t.allow1(t.hashAddr(addr), now)
}

// AllowNAddr is AllowN for a client address (see AllowAddr).
func (t *Table) AllowNAddr(addr netip.Addr, n int64) (limit.Result, error) {
	return t.AllowNAddrAt(addr, t.clock(), n)
}

// AllowNAddrAt is AllowNAt for a client address (see AllowAddr).
func (t *Table) AllowNAddrAt(addr netip.Addr, now, n int64) (limit.Result, error) {
	return t.decide(t.hashAddr(addr), now, n, false)
}

// Remaining is RemainingAt at the clock's now.
func (t *Table) Remaining(key string) int64 { return t.RemainingAt(key, t.clock()) }

// RemainingAt returns the whole units key could take at now: its
// limiter's Remaining, the burst (or limit) for a key the table does not
// hold. It changes nothing and is not counted in Stats.
func (t *Table) RemainingAt(key string, now int64) int64 {
	r, _ := t.look(maphash.String(t.seed, key), now, 0, false)
	return r.Remaining
}

func (t *Table) hash64(key uint64) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], key)
	return maphash.Bytes(t.seed, b[:])
}

// hashAddr hashes 4 bytes for IPv4 and 16 (the prefix, zero beyond it)
// for IPv6, so no IPv4 address shares a key with an IPv6 prefix.
func (t *Table) hashAddr(addr netip.Addr) uint64 {
	addr = addr.Unmap()
	switch {
	case !addr.IsValid():
		return maphash.Bytes(t.seed, nil)
	case addr.Is4():
		b := addr.As4()
		return maphash.Bytes(t.seed, b[:])
	}
	b := addr.As16()
	full, part := t.v6bits/8, t.v6bits%8
	if full < 16 {
		b[full] &= ^byte(0xff >> part)
		clear(b[full+1:])
	}
	return maphash.Bytes(t.seed, b[:])
}
