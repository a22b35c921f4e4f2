package debounce_test

import (
	"fmt"
	"time"

	"github.com/cellrate/cellrate/debounce"
)

func ExampleDebouncer() {
	// Rebuild once per burst of changes: 100 ms after the last one, and at
	// least every second while changes keep coming.
	d, err := debounce.New(100*time.Millisecond, func() { fmt.Println("rebuild") },
		debounce.WithMaxWait(time.Second))
	if err != nil {
		panic(err)
	}
	defer d.Stop()
	for range 5 {
		d.Call() // a change
	}
	// At shutdown, run what is pending now rather than after the wait.
	fmt.Println(d.Flush())
	fmt.Println(d.Flush()) // nothing pending any more
	// Output:
	// rebuild
	// true
	// false
}

func ExampleWithEdges() {
	// Leading edge only: the first call of a burst runs at once, the rest of
	// the burst is dropped.
	d, _ := debounce.New(time.Hour, func() { fmt.Println("notify") }, debounce.WithEdges(true, false))
	defer d.Stop()
	d.Call()
	d.Call()
	d.Call()
	// Output:
	// notify
}
