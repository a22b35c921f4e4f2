package atomic128_test

import (
	"fmt"

	"github.com/cellrate/cellrate/atomic128"
)

func ExampleUint64Pair() {
	// A value and its version, updated together: a writer that read an old
	// version fails its CompareAndSwap and must read again.
	var p atomic128.Uint64Pair
	p.Store(100, 1)
	value, version := p.Load()
	fmt.Println(p.CompareAndSwap(value, version, value+5, version+1))
	fmt.Println(p.CompareAndSwap(value, version, value+7, version+1)) // stale
	fmt.Println(p.Load())
	// Output:
	// true
	// false
	// 105 2
}
