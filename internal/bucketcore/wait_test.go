package bucketcore

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cellrate/cellrate/nanotime"
)

// The Wait tests run in synctest bubbles with the bucket on nanotime.Since,
// which follows the bubble's fake clock (nanotime.Now would not).

func TestWaitBlocksForTheRefill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := New(2, time.Second, 1, WithClock(nanotime.Since()))
		start := time.Now()
		for i := range 5 {
			if err := l.WaitN(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			if got, want := time.Since(start), time.Duration(i)*500*time.Millisecond; got != want {
				t.Fatalf("wait %d returned after %v, want %v", i, got, want)
			}
		}
	})
}

func TestWaitersAreServedInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := New(1, time.Second, 1, WithClock(nanotime.Since()))
		l.Allow()
		start := time.Now()
		done := make(chan time.Duration, 3)
		for range 3 {
			go func() {
				if err := l.WaitN(context.Background(), 1); err != nil {
					t.Error(err)
				}
				done <- time.Since(start)
			}()
			synctest.Wait() // each waiter has reserved before the next starts
		}
		for i := range 3 {
			if got, want := <-done, time.Duration(i+1)*time.Second; got != want {
				t.Fatalf("waiter %d done after %v, want %v", i, got, want)
			}
		}
	})
}

func TestWaitCancelGivesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := New(1, time.Second, 1, WithClock(nanotime.Since()))
		l.Allow()
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() { errc <- l.WaitN(ctx, 1) }()
		time.Sleep(300 * time.Millisecond)
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait = %v", err)
		}
		// The cancelled waiter's token went back: the next one is due at 1s.
		if l.Allow() {
			t.Fatal("a token appeared early")
		}
		time.Sleep(700 * time.Millisecond)
		if !l.Allow() {
			t.Fatal("the given-back token is missing at 1s")
		}
	})
}

func TestWaitDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := New(1, time.Second, 1, WithClock(nanotime.Since()))
		l.Allow()
		ctx, cancel := context.WithTimeout(context.Background(), 999*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := l.WaitN(ctx, 1); !errors.Is(err, ErrDeadline) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait = %v", err)
		}
		if time.Since(start) != 0 {
			t.Fatal("Wait blocked although the deadline was too soon")
		}
		// Nothing was kept: the token is still due at 1s.
		time.Sleep(time.Second)
		if !l.Allow() {
			t.Fatal("the deadline-refused wait kept its token")
		}
		// A deadline that is far enough lets Wait through.
		ctx2, cancel2 := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel2()
		if err := l.WaitN(ctx2, 1); err != nil {
			t.Fatalf("Wait with a later deadline = %v", err)
		}
		// An already-done context returns its error without taking anything.
		if err := l.WaitN(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait on an expired context = %v", err)
		}
	})
}
