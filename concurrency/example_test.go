package concurrency_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/cellrate/cellrate/concurrency"
)

// A bulkhead: at most 2 requests in flight; the third is refused at once.
func ExampleNewFixed() {
	l, err := concurrency.NewFixed(2)
	if err != nil {
		panic(err)
	}
	a, _ := l.TryAcquire()
	b, _ := l.TryAcquire()
	_, ok := l.TryAcquire()
	fmt.Println("third admitted:", ok, "in flight:", l.InFlight())
	a.Release(concurrency.Success)
	fmt.Println("released twice:", a.Release(concurrency.Success)) // a no-op
	b.Release(concurrency.Success)
	fmt.Println("in flight:", l.InFlight())
	// Output:
	// third admitted: false in flight: 2
	// released twice: false
	// in flight: 0
}

// An adaptive limit finds a service's concurrency: here a simulated
// service of 20 workers taking 40ms each, always offered more than it can
// take. Times are injected, so the output is fixed.
func ExampleNew() {
	l, err := concurrency.New(concurrency.WithLimits(5, 1, 1000),
		concurrency.WithClock(func() int64 { return 0 }))
	if err != nil {
		panic(err)
	}
	const workers, service = 20, int64(40 * time.Millisecond)
	now := int64(0)
	for round := range 100 {
		var toks []concurrency.Token
		for {
			tok, ok := l.TryAcquireAt(now)
			if !ok {
				break
			}
			toks = append(toks, tok)
		}
		// Past 20 in flight, requests queue: latency grows with the count.
		now += service * int64(max(workers, len(toks))) / workers
		for _, tok := range toks {
			tok.ReleaseAt(now, concurrency.Success)
		}
		if round == 0 || round == 99 {
			fmt.Printf("round %d: %d in flight, limit now %d\n", round, len(toks), l.Limit())
		}
	}
	// Output:
	// round 0: 5 in flight, limit now 5
	// round 99: 22 in flight, limit now 22
}

// Do holds a token while a function runs and releases it however the
// function ends, with its outcome.
func ExampleLimiter_Do() {
	l, _ := concurrency.NewFixed(1)
	errTimeout := errors.New("timeout")
	isDrop := func(err error) bool { return errors.Is(err, errTimeout) }
	err := l.Do(context.Background(), func() error { return errTimeout }, isDrop)
	fmt.Println(err, "- in flight:", l.InFlight())
	// Output: timeout - in flight: 0
}

// The shape of an HTTP middleware: acquire after the rate limits admit,
// 503 when the limit is full, release when the handler returns. The
// deferred Ignored release frees the slot if the handler panics; on the
// normal path the explicit release comes first and the deferred one does
// nothing.
func ExampleToken_Release() {
	l, _ := concurrency.NewFixed(1)
	middleware := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tok, ok := l.TryAcquire()
			if !ok {
				http.Error(w, "overloaded", http.StatusServiceUnavailable)
				return
			}
			defer tok.Release(concurrency.Ignored)
			next.ServeHTTP(w, r)
			tok.Release(concurrency.Success)
		})
	}
	inside := make(chan struct{})
	leave := make(chan struct{})
	srv := httptest.NewServer(middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(inside)
			<-leave
		}
	})))
	defer srv.Close()
	done := make(chan struct{})
	go func() {
		resp, err := http.Get(srv.URL + "/slow")
		if err == nil {
			resp.Body.Close()
		}
		close(done)
	}()
	<-inside // the slow request holds the only slot
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("while full:", resp.StatusCode)
	close(leave)
	<-done
	fmt.Println("in flight after:", l.InFlight())
	// Output:
	// while full: 503
	// in flight after: 0
}

// AIMD adds to the limit after each window without loss in which requests
// neared the limit, and cuts it by WithBackoff's factor after a window with
// a request released as Dropped (a timeout, a 503 from further down).
// Times are injected, so the output is fixed.
func ExampleWithAIMD() {
	l, err := concurrency.New(concurrency.WithAIMD(1, 0), concurrency.WithBackoff(0.5),
		concurrency.WithLimits(8, 1, 100), concurrency.WithWindow(time.Millisecond, time.Second, 4),
		concurrency.WithClock(func() int64 { return 0 }))
	if err != nil {
		panic(err)
	}
	now := int64(0)
	for _, o := range []concurrency.Outcome{concurrency.Success, concurrency.Success, concurrency.Dropped, concurrency.Success} {
		var toks []concurrency.Token
		for {
			tok, ok := l.TryAcquireAt(now)
			if !ok {
				break
			}
			toks = append(toks, tok)
		}
		now += int64(10 * time.Millisecond)
		for _, tok := range toks {
			tok.ReleaseAt(now, o)
		}
		now += int64(10 * time.Millisecond) // idle until the next round
		fmt.Printf("%d in flight, released as %v: limit now %d\n", len(toks), o, l.Limit())
	}
	// Output:
	// 8 in flight, released as Success: limit now 9
	// 9 in flight, released as Success: limit now 10
	// 10 in flight, released as Dropped: limit now 5
	// 5 in flight, released as Success: limit now 6
}
