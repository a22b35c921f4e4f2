package debounce

import (
	"sync"
	"testing"
	"time"
)

// mutexTrailing is seed 002's trailing debouncer with timer reuse: a mutex
// and a timer.Reset on every call.
type mutexTrailing struct {
	mu    sync.Mutex
	timer *time.Timer
	delay time.Duration
}

func (d *mutexTrailing) Trigger() {
	d.mu.Lock()
	d.timer.Reset(d.delay)
	d.mu.Unlock()
}

// A call inside an open burst (the wait is an hour): the Debouncer's
// load and CAS against a mutex and a timer reset.
func BenchmarkCall(b *testing.B) {
	b.Run("debounce", func(b *testing.B) {
		d, _ := New(time.Hour, func() {})
		defer d.Stop()
		b.Run("g=1", func(b *testing.B) {
			for range b.N {
				d.Call()
			}
		})
		b.Run("parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					d.Call()
				}
			})
		})
	})
	b.Run("mutex-timer", func(b *testing.B) {
		d := &mutexTrailing{timer: time.AfterFunc(time.Hour, func() {}), delay: time.Hour}
		defer d.timer.Stop()
		b.Run("g=1", func(b *testing.B) {
			for range b.N {
				d.Trigger()
			}
		})
		b.Run("parallel", func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					d.Trigger()
				}
			})
		})
	})
}
