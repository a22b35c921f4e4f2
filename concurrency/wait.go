package concurrency

import (
	"context"
	"sync"
	"sync/atomic"
)

// waiters is the queue of blocked Acquires. A release takes its lock only
// when someone waits (n > 0); admission itself is always the lock-free
// TryAcquire, so a woken waiter that loses the race queues again.
type waiters struct {
	n  atomic.Int64
	mu sync.Mutex
	q  []chan struct{}
}

// wait blocks until l admits the caller or ctx is done.
func (l *Limiter) wait(ctx context.Context) (Token, error) {
	ch := make(chan struct{}, 1)
	for {
		l.w.push(ch)
		// A release between the failed try and push saw no waiter: try
		// again now that the release would see this one.
		if t, ok := l.TryAcquire(); ok {
			if !l.w.remove(ch) {
				l.w.wake() // woken meanwhile: pass the wakeup on
			}
			return t, nil
		}
		select {
		case <-ch:
			if t, ok := l.TryAcquire(); ok {
				return t, nil
			}
		case <-ctx.Done():
			if !l.w.remove(ch) {
				l.w.wake() // woken meanwhile: pass the wakeup on
			}
			return Token{}, ctx.Err()
		}
	}
}

func (w *waiters) push(ch chan struct{}) {
	w.mu.Lock()
	w.q = append(w.q, ch)
	w.n.Add(1)
	w.mu.Unlock()
}

// remove takes ch out of the queue, reporting whether it was still there
// (not woken). A wakeup already sent to it is drained.
func (w *waiters) remove(ch chan struct{}) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, c := range w.q {
		if c == ch {
			w.q = append(w.q[:i], w.q[i+1:]...)
			w.n.Add(-1)
			return true
		}
	}
	select {
	case <-ch:
	default:
	}
	return false
}

// wake wakes the longest waiting Acquire, if any.
func (w *waiters) wake() {
	if w.n.Load() == 0 {
		return
	}
	w.mu.Lock()
	if len(w.q) > 0 {
		ch := w.q[0]
		w.q = w.q[1:]
		w.n.Add(-1)
		ch <- struct{}{}
	}
	w.mu.Unlock()
}

// wakeAll wakes every waiting Acquire, after the limit rose.
func (w *waiters) wakeAll() {
	if w.n.Load() == 0 {
		return
	}
	w.mu.Lock()
	for _, ch := range w.q {
		ch <- struct{}{}
	}
	w.q = w.q[:0]
	w.n.Store(0)
	w.mu.Unlock()
}
