package pacer_test

import (
	"context"
	"fmt"
	"time"

	"github.com/cellrate/cellrate/pacer"
)

func ExamplePacer() {
	// 50 calls a second, evenly spaced: 20 ms apart.
	p, err := pacer.New(50, time.Second)
	if err != nil {
		panic(err)
	}
	start := time.Now()
	for range 6 {
		if err := p.Wait(context.Background()); err != nil {
			panic(err)
		}
	}
	// 6 takes span 5 intervals: at least 100 ms.
	fmt.Println(time.Since(start) >= 100*time.Millisecond)
	// Output: true
}

func ExamplePacer_ReserveAt() {
	// Injected time: 2 per second with a slack of 1. After an idle period
	// one extra slot comes early, then the spacing resumes.
	p, _ := pacer.New(2, time.Second, pacer.WithSlack(1))
	now := int64(time.Hour)
	for range 5 {
		r := p.ReserveAt(now)
		fmt.Println(time.Duration(r.Wait))
	}
	// Output:
	// 0s
	// 0s
	// 500ms
	// 1s
	// 1.5s
}
