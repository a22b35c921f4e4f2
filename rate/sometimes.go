package rate

import (
	"sync"
	"time"
)

// Sometimes runs an action now and then, as x/time/rate's Sometimes does:
// Do runs f on the first call, and then on each call that First, Every or
// Interval allows (a union of the three). The zero Sometimes runs f once.
//
//	var sometimes = rate.Sometimes{First: 3, Interval: 10 * time.Second}
//	func Spammy() { sometimes.Do(func() { log.Print("here I am") }) }
type Sometimes struct {
	First    int           // if > 0, the first First calls run f
	Every    int           // if > 0, every Every-th call runs f, starting with the first
	Interval time.Duration // if > 0, a call runs f if Interval has passed since f last ran

	mu    sync.Mutex
	count int       // calls to Do so far
	last  time.Time // when f last ran, if Interval > 0
}

// Do runs f if the filters allow this call. Calls run one at a time, f
// included: f must not call Do on the same Sometimes.
func (s *Sometimes) Do(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run := s.count == 0 ||
		(s.First > 0 && s.count < s.First) ||
		(s.Every > 0 && s.count%s.Every == 0) ||
		(s.Interval > 0 && time.Since(s.last) >= s.Interval)
	if run {
		f()
		if s.Interval > 0 {
			s.last = time.Now()
		}
	}
	s.count++
}
