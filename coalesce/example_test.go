package coalesce_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cellrate/cellrate/coalesce"
)

func ExampleGroup() {
	// Many requests for one cold cache entry: the first loads it, the others
	// wait for that load instead of starting their own.
	var loads atomic.Int32
	release := make(chan struct{})
	g, err := coalesce.New(func(key string) (string, error) {
		loads.Add(1)
		<-release // a slow load
		return "value of " + key, nil
	})
	if err != nil {
		panic(err)
	}
	defer g.Stop()
	var wg sync.WaitGroup
	results := make([]string, 5)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _ = g.Do(context.Background(), "user:42")
		}()
	}
	for g.Waiting("user:42") < 4 { // the 4 others have joined the load
	}
	close(release)
	wg.Wait()
	fmt.Println(results[0], results[4], loads.Load())
	// Output: value of user:42 value of user:42 1
}
