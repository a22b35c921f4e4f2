package keyed_test

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/cellrate/cellrate/keyed"
)

// A limiter per client: 10 requests a second, bursts of 5, for up to a
// million clients in about 24 MB that never grows.
func Example() {
	t, err := keyed.New(10, time.Second, 5, keyed.WithCapacity(1<<20))
	if err != nil {
		panic(err)
	}
	now := int64(time.Hour) // injected time; Allow reads the clock
	n := 0
	for t.AllowAt("alice", now) {
		n++
	}
	fmt.Println("alice:", n, "then denied")
	fmt.Println("bob:", t.AllowAt("bob", now))
	fmt.Println("alice 100ms later:", t.AllowAt("alice", now+int64(100*time.Millisecond)))
	// Output:
	// alice: 5 then denied
	// bob: true
	// alice 100ms later: true
}

// IPv6 clients are limited per /64 by default, since one client owns a
// whole /64.
func ExampleTable_AllowAddrAt() {
	t, _ := keyed.NewWindow(2, time.Minute)
	now := int64(time.Hour)
	for _, a := range []string{"2001:db8::1", "2001:db8::2", "2001:db8::3", "2001:db8:0:1::1", "192.0.2.7"} {
		fmt.Println(a, t.AllowAddrAt(netip.MustParseAddr(a), now))
	}
	// Output:
	// 2001:db8::1 true
	// 2001:db8::2 true
	// 2001:db8::3 false
	// 2001:db8:0:1::1 true
	// 192.0.2.7 true
}

// With WithRefuse a new key that finds its group busy is denied
// (fail closed), with the time at which a slot frees: 500ms for the keys
// to refill, and 10ms more in which they must have owed nothing. No key
// loses what it has taken.
func ExampleWithRefuse() {
	t, _ := keyed.New(10, time.Second, 5, keyed.WithCapacity(4), keyed.WithRefuse())
	now := int64(time.Hour)
	for _, k := range []string{"a", "b", "c", "d"} {
		t.AllowNAt(k, now, 5) // four keys, each empty for 500ms
	}
	r, err := t.AllowNAt("e", now, 1)
	fmt.Println(r.OK, errors.Is(err, keyed.ErrFull), r.RetryAfter)
	r, _ = t.AllowNAt("e", now+int64(r.RetryAfter), 1)
	fmt.Println(r.OK)
	s := t.Stats()
	fmt.Println("refusals", s.Refusals, "evictions", s.Evictions)
	// Output:
	// false true 510ms
	// true
	// refusals 1 evictions 0
}

// By default a new key that finds its groups busy
// takes the slot of the key that owes most, and that key's debt is kept:
// it comes back owing what it owed, so no flood of new keys gives it a
// fresh burst.
func ExampleNew_evict() {
	t, _ := keyed.New(10, time.Second, 5, keyed.WithCapacity(4))
	now := int64(time.Hour)
	for i, k := range []string{"a", "b", "c", "d"} {
		t.AllowNAt(k, now, int64(i+2)%5+1) // c takes 5, the others less
	}
	t.AllowAt("e", now)
	s := t.Stats()
	fmt.Println("keys", s.Keys, "evictions", s.Evictions)
	fmt.Println("c:", t.RemainingAt("c", now), "remaining, as before")
	fmt.Println("c after 100ms:", t.AllowAt("c", now+int64(100*time.Millisecond)))
	// Output:
	// keys 4 evictions 1
	// c: 0 remaining, as before
	// c after 100ms: true
}
