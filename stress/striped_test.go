package stress

import (
	"sync/atomic"
	"testing"

	"github.com/cellrate/cellrate/striped"
)

func TestStripedCounter(t *testing.T) {
	if err := CounterBounds(new(striped.Counter), runFor(t), crowd(), seed(t)); err != nil {
		t.Fatal(err)
	}
}

// lossyCounter drops every Add that finds an odd total: it must fail.
type lossyCounter struct{ n int64 }

func (c *lossyCounter) Add(n int64) {
	if v := atomic.LoadInt64(&c.n); v%2 == 0 {
		atomic.AddInt64(&c.n, n)
	}
}

func (c *lossyCounter) Load() int64 { return atomic.LoadInt64(&c.n) }

func TestCounterBoundsCatchesLossyCounter(t *testing.T) {
	if err := CounterBounds(new(lossyCounter), runFor(t), crowd(), seed(t)); err == nil {
		t.Fatal("a counter that drops Adds passed")
	} else {
		t.Logf("caught: %v", err)
	}
}
