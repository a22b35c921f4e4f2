package httplimit

import (
	"testing"
	"time"
)

// TestBurstAndRemaining: a client's full bucket passes exactly its burst
// at one instant, and each RateLimit r field is what still passes, also
// where a token is not a whole number of packed64's time units (a minute
// is 3662109.375 units of 16384ns).
func TestBurstAndRemaining(t *testing.T) {
	var clk clock
	clk.ns.Store(int64(time.Hour))
	lim := mustNew(t, []Policy{{Name: "p", Client: Rate(1, time.Minute, 3)}}, WithClock(clk.now))
	url, c := startServer(t, "tcp4", lim.Wrap(okHandler))
	for i := range 3 {
		res := get(t, c, url)
		if _, r, _ := rateLimitField(t, res.Header.Get("RateLimit")); res.StatusCode != 200 || r != int64(2-i) {
			t.Fatalf("request %d: %d, RateLimit %q, want 200 with r=%d", i, res.StatusCode, res.Header.Get("RateLimit"), 2-i)
		}
	}
	if res := get(t, c, url); res.StatusCode != 429 {
		t.Fatalf("request 3: %d %v", res.StatusCode, res.Header)
	}
}
