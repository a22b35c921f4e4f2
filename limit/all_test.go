package limit

import (
	"errors"
	"testing"
)

// counter is a Member with a fixed capacity that logs its calls.
type counter struct {
	name string
	left int64
	log  *[]string
}

func (c *counter) AllowAt(now int64) bool { r, _ := c.AllowNAt(now, 1); return r.OK }

func (c *counter) AllowNAt(now, n int64) (Result, error) {
	r, _, err := c.TakeAt(now, n)
	return r, err
}

func (c *counter) TakeAt(now, n int64) (Result, Receipt, error) {
	*c.log = append(*c.log, c.name+" take")
	switch {
	case n < 0:
		return Result{RetryAfter: Never}, Receipt{}, ErrNegativeCost
	case n > 100:
		return Result{RetryAfter: Never}, Receipt{}, ErrCostExceedsBurst
	case n > c.left:
		return Result{Remaining: c.left, RetryAfter: 7}, Receipt{}, nil
	}
	c.left -= n
	if n == 0 {
		return Result{OK: true, Remaining: c.left}, Receipt{}, nil
	}
	return Result{OK: true, Remaining: c.left}, Receipt{At: now, N: n}, nil
}

func (c *counter) Refund(rc Receipt) {
	*c.log = append(*c.log, c.name+" refund")
	c.left += rc.N
}

func TestAllOrder(t *testing.T) {
	var log []string
	a := &counter{"a", 5, &log}
	b := &counter{"b", 3, &log}
	c := &counter{"c", 1, &log}
	all, err := NewAll(a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	r, err := all.AllowNAt(0, 1)
	if !r.OK || err != nil || r.Remaining != 0 || a.left != 4 || b.left != 2 || c.left != 0 {
		t.Fatalf("AllowNAt(0, 1) = %+v, %v; left %d %d %d", r, err, a.left, b.left, c.left)
	}
	// c denies: b then a are refunded, in that order, and c's Result is
	// returned.
	log = nil
	r, err = all.AllowNAt(0, 1)
	if r.OK || err != nil || r.RetryAfter != 7 || a.left != 4 || b.left != 2 {
		t.Fatalf("denied by c: %+v, %v; left %d %d", r, err, a.left, b.left)
	}
	want := []string{"a take", "b take", "c take", "b refund", "a refund"}
	if len(log) != len(want) {
		t.Fatalf("calls %v, want %v", log, want)
	}
	for i := range want {
		if log[i] != want[i] {
			t.Fatalf("calls %v, want %v", log, want)
		}
	}
	// A member's cost error refunds the earlier ones and is returned.
	c.left = 1
	if r, err := all.AllowNAt(0, 101); r.OK || !errors.Is(err, ErrCostExceedsBurst) || a.left != 4 || b.left != 2 {
		t.Fatalf("n = 101: %+v, %v", r, err)
	}
	// The first member's denial asks no one else.
	log = nil
	a.left = 0
	if all.AllowAt(0) || len(log) != 1 {
		t.Fatalf("denied by a: calls %v", log)
	}
	// n == 0 is admitted with the least Remaining.
	a.left = 9
	if r, err := all.AllowNAt(0, 0); !r.OK || err != nil || r.Remaining != 1 {
		t.Fatalf("n == 0: %+v, %v", r, err)
	}
}

func TestAllErrors(t *testing.T) {
	var pe *ParamError
	if _, err := NewAll(); !errors.As(err, &pe) || pe.Param != "members" {
		t.Fatalf("NewAll(): %v", err)
	}
	var log []string
	if _, err := NewAll(&counter{"a", 1, &log}, nil); !errors.As(err, &pe) || pe.Param != "member" || pe.Value != 1 {
		t.Fatalf("NewAll(a, nil): %v", err)
	}
	// A nil pointer of a Member type is as nil as a nil interface.
	if _, err := NewAll(&counter{"a", 1, &log}, (*counter)(nil)); !errors.As(err, &pe) || pe.Param != "member" || pe.Value != 1 {
		t.Fatalf("NewAll(a, (*counter)(nil)): %v", err)
	}
	// The zero All fails safe: it admits nothing.
	var zero All
	for _, n := range []int64{1, 3} {
		if r, err := zero.AllowNAt(0, n); r.OK || r.RetryAfter != Never || !errors.Is(err, ErrCostExceedsBurst) {
			t.Fatalf("zero All, n = %d: %+v, %v", n, r, err)
		}
	}
	if zero.AllowAt(0) {
		t.Fatal("zero All: AllowAt admitted")
	}
	if r, err := zero.AllowNAt(0, 0); !r.OK || r.Remaining != 0 || err != nil {
		t.Fatalf("zero All, n = 0: %+v, %v", r, err)
	}
	if r, err := zero.AllowNAt(0, -1); r.OK || !errors.Is(err, ErrNegativeCost) {
		t.Fatalf("zero All, n = -1: %+v, %v", r, err)
	}
}
