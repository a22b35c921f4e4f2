package limit_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/window"
)

func ExampleAll() {
	// Each client may make 2 requests per second; all clients together 3
	// per second (a sliding window). The shared limit goes last: it is
	// asked only when the client's own limit admits, and never refunded.
	global, _ := window.New(3, time.Second)
	alice, _ := gcra.New(2, time.Second, 2)
	bob, _ := gcra.New(2, time.Second, 2)
	forAlice, _ := limit.NewAll(alice, global)
	forBob, _ := limit.NewAll(bob, global)

	now := int64(0) // nanoseconds from any fixed origin, e.g. nanotime.Now()
	fmt.Println("alice", forAlice.AllowAt(now), forAlice.AllowAt(now), forAlice.AllowAt(now))
	// Alice's third was denied by her own limit: the global one was not
	// asked. Bob gets the one global unit left; his second is denied by the
	// global limit, and his own limit gets its unit back.
	fmt.Println("bob", forBob.AllowAt(now), forBob.AllowAt(now))
	fmt.Println("bob's own limit has", bob.RemainingAt(now), "left")
	// Output:
	// alice true true false
	// bob true false
	// bob's own limit has 1 left
}

func ExampleParamError() {
	// A parameter out of range is a *limit.ParamError naming it, with the
	// range that fits.
	_, err := gcra.New(10, time.Second, 0)
	var pe *limit.ParamError
	if errors.As(err, &pe) {
		fmt.Println(pe.Param, pe.Value, pe.Min)
	}
	fmt.Println(err)
	// Output:
	// burst 0 1
	// gcra: burst 0 out of range (must be >= 1)
}
