package nanotime_test

import (
	"fmt"
	"time"

	"github.com/cellrate/cellrate/nanotime"
)

func ExampleNow() {
	start := nanotime.Now()
	time.Sleep(time.Millisecond)
	elapsed := time.Duration(nanotime.Now() - start)
	fmt.Println(elapsed >= time.Millisecond)
	// Output: true
}

func ExampleCoarse() {
	var clock nanotime.Coarse // ready to use: 1ms resolution
	t := clock.Now()
	fmt.Println(t <= nanotime.Now())
	// Output: true
}

func ExampleSince() {
	clock := nanotime.Since()
	a := clock()
	time.Sleep(time.Millisecond)
	fmt.Println(clock()-a >= int64(time.Millisecond))
	// Output: true
}
