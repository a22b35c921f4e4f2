package redis

import (
	"context"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// TestTimeoutWhateverTheContext stops the server (SIGSTOP), so that only a
// deadline ends a call: WithTimeout must bound a Limiter's call whether
// its context has no deadline or a later one. The client's own read and
// write timeouts are 5s, so a call the option does not bound takes 5s.
// Under -short: a server of its own, stopped for a fraction of a second.
func TestTimeoutWhateverTheContext(t *testing.T) {
	t.Parallel() // waits on the stopped server; a server of its own
	s := redistest.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr, ContextTimeoutEnabled: true, MaxRetries: -1,
		DialTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second})
	t.Cleanup(func() { c.Close() })
	const timeout = 100 * time.Millisecond
	l, err := NewGCRA(c, "to", 10, time.Second, 5, WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	// Connected, functions loaded (a loaded machine may take more than
	// the timeout to do it).
	recovers(t, "the first call", false, func() (bool, error) { return l.Allow(bg, "k") })
	s.Stop()
	t.Cleanup(s.Continue) // before the server is killed
	late, cancel := context.WithTimeout(bg, time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
	}{{"no deadline", bg}, {"a later deadline", late}} {
		start := time.Now()
		_, err := l.Allow(tc.ctx, "k")
		if el := time.Since(start); err == nil || el > timeout+slack {
			t.Errorf("%s: the call took %v (timeout %v) and returned %v", tc.name, el, timeout, err)
		}
	}
}
