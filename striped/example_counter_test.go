package striped_test

import (
	"fmt"
	"sync"

	"github.com/cellrate/cellrate/striped"
)

func ExampleCounter() {
	var hits striped.Counter
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				hits.Add(1)
			}
		})
	}
	wg.Wait()
	fmt.Println(hits.Load())
	// Output: 4000
}
