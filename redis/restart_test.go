package redis

import (
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// TestFaultEmptyRestart restarts Redis empty under one saturating TwoTier
// (100/s, burst 1000): its next borrow rebuilds the key from the state its
// last borrow wrote, so the admissions before and after the restart keep
// the exact bound together. A Limiter has no such memory: its key admits
// up to its burst again, the excess its documentation states.
func TestFaultEmptyRestart(t *testing.T) {
	longTest(t)
	s := redistest.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	tt, err := NewTwoTier(c, "rs", 100, time.Second, 1000, WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	const gevents, gburst = 10, 100
	l, err := NewGCRA(c, "rsl", gevents, time.Second, gburst)
	if err != nil {
		t.Fatal(err)
	}
	var adm []admission
	var gcraAdm int64
	run := func(d time.Duration) {
		for stop := time.Now().Add(d); time.Now().Before(stop); {
			if r, at, err := tt.allow(bg, "k", 1); err == nil && r.OK {
				adm = append(adm, admission{at: at, n: 1})
			}
		}
		for stop := time.Now().Add(d); time.Now().Before(stop); {
			if ok, err := l.Allow(bg, "k"); err == nil && ok {
				gcraAdm++
			}
		}
	}
	start := time.Now()
	run(400 * time.Millisecond)
	before := len(adm)
	s.Kill()
	s.Restart()
	run(400 * time.Millisecond)
	span := time.Since(start).Seconds()
	checkBound(t, adm, func(sum, span int64) bool { return sum*1e9 > 1000*1e9+100*span })
	gbound := gburst + gevents*span
	t.Logf("TwoTier: %d admitted before the restart, %d after (bound over both %.0f); Limiter: %d admitted, its bound %.0f plus its burst %d",
		before, len(adm)-before, 1000+100*span, gcraAdm, gbound, gburst)
	if float64(gcraAdm) > gbound+gburst {
		t.Errorf("the Limiter admitted %d, over its bound %.0f plus the burst", gcraAdm, gbound)
	}
}
