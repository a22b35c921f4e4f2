package keyed_test

import (
	"fmt"
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
)

// client is one key of a table as a limit.Member, so that limit.All can
// decide it together with other limits.
type client struct {
	table *keyed.Table
	key   string
}

func (c client) AllowAt(now int64) bool { r, _ := c.AllowNAt(now, 1); return r.OK }

func (c client) AllowNAt(now, n int64) (limit.Result, error) {
	r, _, err := c.TakeAt(now, n)
	return r, err
}

func (c client) TakeAt(now, n int64) (limit.Result, limit.Receipt, error) {
	return c.table.TakeAt(c.key, now, n)
}

func (c client) Refund(rc limit.Receipt) { c.table.Refund(rc) }

// A client's limit and a global one in one all-or-nothing decision: the
// global limit denies the third request, and the client's unit for it is
// given back. The per-client limit goes first, the shared one last.
func ExampleTable_TakeAt() {
	perClient, err := keyed.New(1, time.Second, 5)
	if err != nil {
		panic(err)
	}
	global, err := gcra.New(1, time.Second, 2)
	if err != nil {
		panic(err)
	}
	now := int64(time.Hour) // nanoseconds from any fixed origin, e.g. nanotime.Now()
	for range 3 {
		// One All a request, for the key the request names.
		alice, err := limit.NewAll(client{perClient, "alice"}, global)
		if err != nil {
			panic(err)
		}
		r, _ := alice.AllowNAt(now, 1)
		fmt.Println(r.OK, perClient.RemainingAt("alice", now))
	}
	// Output:
	// true 4
	// true 3
	// false 3
}
