package keyed

import (
	"math"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/gcrastep"
)

// A new key with no empty slot in its groups takes an idle slot from the
// group with more idle slots, so that groups fill evenly.
func TestChooseIdleFromTheFreerGroup(t *testing.T) {
	tb, err := New(1, time.Second, 1, WithCapacity(8))
	if err != nil {
		t.Fatal(err)
	}
	now := int64(1e12)
	busyState, r, _ := tb.k.g.Step(gcrastep.State(0), now, 1) // owes 1s from now
	if !r.OK {
		t.Fatal("the first admission was denied")
	}
	p := probe{t: tb, g1: 0, g2: 1, tag: 99}
	var tags, words [2 * groupSlots]uint64
	for i := range p.s {
		p.s[i] = &tb.slots[i]
		tags[i], words[i] = uint64(i+1), uint64(busyState)
	}
	for _, i := range []int{1, 5, 6, 7} { // one idle slot in the first group, three in the second
		words[i] = 0
	}
	v := tb.choose(&p, &tags, &words, now)
	if v.class != idle || v.i < groupSlots {
		t.Errorf("took slot %d (class %d), want an idle slot of the second group", v.i, v.class)
	}
}

// A Receipt names the slot of the key wherever it is, from the admission
// that placed the key or a later one, up to the whole burst: Refund then
// gives every unit back.
func TestRefundOfANewKeyInAnySlot(t *testing.T) {
	tb, err := New(1, time.Hour, 3, WithCapacity(64))
	if err != nil {
		t.Fatal(err)
	}
	const now = int64(1e12)
	for k := range 40 {
		key := strconv.Itoa(k)
		r, rc, err := tb.TakeAt(key, now, 2)
		if !r.OK || err != nil || rc.N != 2 {
			t.Fatalf("key %s: %+v %+v %v", key, r, rc, err)
		}
		tb.Refund(rc)
		// Again, on the key's slot (fresh again), and for the whole burst.
		for _, n := range []int64{2, 3} {
			r, rc, err = tb.TakeAt(key, now, n)
			if !r.OK || err != nil || rc.N != n {
				t.Fatalf("key %s, n %d: %+v %+v %v", key, n, r, rc, err)
			}
			tb.Refund(rc)
		}
		if r, _ := tb.AllowNAt(key, now, 3); !r.OK {
			t.Fatalf("key %s: the burst is not back after the refunds", key)
		}
	}
}

// WithIPv6Prefix keys an IPv6 address by its leading bits only, also for a
// prefix that ends inside a byte (/60) or covers the whole address (/128).
func TestIPv6PrefixBits(t *testing.T) {
	for _, c := range []struct {
		bits       int
		a, same, b string // a and same are one client, b another
	}{
		{60, "2001:db8:0:10::1", "2001:db8:0:1f::2", "2001:db8:0:20::1"},
		{64, "2001:db8:0:1::1", "2001:db8:0:1:ffff::", "2001:db8:0:2::1"},
		{128, "2001:db8::1", "2001:db8::1", "2001:db8::2"},
	} {
		tb, err := New(1, time.Hour, 1, WithIPv6Prefix(c.bits))
		if err != nil {
			t.Fatal(err)
		}
		const now = int64(1e12)
		if !tb.AllowAddrAt(netip.MustParseAddr(c.a), now) {
			t.Fatalf("/%d: %s denied at first", c.bits, c.a)
		}
		if tb.AllowAddrAt(netip.MustParseAddr(c.same), now) {
			t.Errorf("/%d: %s admitted after %s, the same client", c.bits, c.same, c.a)
		}
		if !tb.AllowAddrAt(netip.MustParseAddr(c.b), now) {
			t.Errorf("/%d: %s denied after %s, another client", c.bits, c.b, c.a)
		}
	}
}

// WithCapacity accepts the ends of its range (checked on the option alone:
// the largest table would not fit in memory here).
func TestCapacityBounds(t *testing.T) {
	for _, keys := range []int{groupSlots, maxSlots} {
		var c config
		WithCapacity(keys)(&c)
		if c.slotsErr != nil || c.slots != int64(keys) {
			t.Errorf("WithCapacity(%d): %v", keys, c.slotsErr)
		}
	}
	for _, keys := range []int{groupSlots - 1, maxSlots + 1} {
		var c config
		WithCapacity(keys)(&c)
		if c.slotsErr == nil {
			t.Errorf("WithCapacity(%d) accepted", keys)
		}
	}
}

// A key's second group is never its first when the table has more than
// one, also for a hash whose two reductions meet in group 0 of a table of
// 3 groups.
func TestSecondGroupDiffers(t *testing.T) {
	tb, err := New(1, time.Second, 1, WithCapacity(3*groupSlots))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []uint64{1, 2, 1 << 40, 1<<63 + 5, ^uint64(0)} {
		if g := tb.group(h); tb.group2(h, g) == g {
			t.Errorf("hash %#x: both groups are %d", h, g)
		}
	}
}

// NewWindow and WithIPv6Prefix accept the ends of their ranges and refuse
// one past each.
func TestParamEdges(t *testing.T) {
	type w struct {
		lim    int64
		window time.Duration
	}
	for _, c := range []w{{1, 1}, {maxLimit, maxWindow}, {1, maxWindow}, {maxLimit, 1}} {
		if _, err := NewWindow(c.lim, c.window, WithCapacity(groupSlots)); err != nil {
			t.Errorf("NewWindow(%d, %d): %v", c.lim, c.window, err)
		}
	}
	for _, c := range []w{{0, 1}, {maxLimit + 1, 1}, {1, 0}, {1, maxWindow + 1}} {
		if _, err := NewWindow(c.lim, c.window, WithCapacity(groupSlots)); err == nil {
			t.Errorf("NewWindow(%d, %d) accepted", c.lim, c.window)
		}
	}
	for _, bits := range []int{1, 128, 0, 129} {
		_, err := New(1, time.Second, 1, WithCapacity(groupSlots), WithIPv6Prefix(bits))
		if ok := bits >= 1 && bits <= 128; ok != (err == nil) {
			t.Errorf("WithIPv6Prefix(%d): %v", bits, err)
		}
	}
}

// A window kind's ns is the first ns of a time unit, exact for the first
// and the last whole units of int64 time, saturated only past them.
func TestUnitEnds(t *testing.T) {
	for _, window := range []time.Duration{1, time.Millisecond, time.Hour} {
		k, err := newWindowKind(3, window)
		if err != nil {
			t.Fatal(err)
		}
		last, first := int64(math.MaxInt64)>>k.shift, int64(math.MinInt64)>>k.shift
		if got := k.ns(last); got != last<<k.shift {
			t.Errorf("window %v: ns(last unit) = %d, want %d", window, got, last<<k.shift)
		}
		if got := k.ns(first); got != math.MinInt64 {
			t.Errorf("window %v: ns(first unit) = %d, want MinInt64", window, got)
		}
		if k.shift > 0 && (k.ns(last+1) != math.MaxInt64 || k.ns(first-1) != math.MinInt64+1) {
			t.Errorf("window %v: ns past the ends = %d, %d, want saturated", window, k.ns(last+1), k.ns(first-1))
		}
	}
}
