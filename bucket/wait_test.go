package bucket_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/cellrate/cellrate/bucket"
)

// TestWaitTooMuchDebt: a Wait whose time to act would pass the end of
// int64 time returns bucket.ErrTooMuchDebt, the error the package
// documents, at once.
func TestWaitTooMuchDebt(t *testing.T) {
	l, err := bucket.New(1, time.Second, 1, bucket.WithClock(func() int64 { return math.MaxInt64 - 1 }))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Wait(context.Background()); err != nil {
		t.Fatalf("the burst's token: %v", err)
	}
	if err := l.Wait(context.Background()); !errors.Is(err, bucket.ErrTooMuchDebt) {
		t.Fatalf("a token past the end of time: %v, want bucket.ErrTooMuchDebt", err)
	}
	if err := l.WaitN(context.Background(), 1); !errors.Is(err, bucket.ErrTooMuchDebt) {
		t.Fatalf("WaitN: %v, want bucket.ErrTooMuchDebt", err)
	}
}
