package redis

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// TestBatchedDecisions: 16 goroutines decide at once on one Limiter, each
// on its own key at its own times, so decisions go in batches; every
// result is the Go step's for that key (a reply given to the wrong caller
// or lost would show), on one server and on a cluster.
func TestBatchedDecisions(t *testing.T) {
	_, c := server(t)
	clients := map[string]Client{"server": c}
	if !testing.Short() {
		clients["cluster"] = redistest.StartCluster(t, 3, 0).Client(t)
	}
	for name, c := range clients {
		l, err := NewGCRA(c, "bd:", 7, time.Second, 3, WithGrace(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := newGoGCRA(7, time.Second, 3)
		base := time.Now().UnixNano()
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := "k" + strconv.Itoa(g)
				var tat uint64
				now := base
				for i := range 200 {
					now += int64(i%5) * 40e6
					n := int64(1 + (i+g)%3)
					next, want, _ := stepGoGCRA(ref, tat, now, n)
					got, err := l.allowNAt(bg, key, now, n)
					if err != nil || got != want {
						t.Errorf("%s key %s decision %d: %+v %v, want %+v", name, key, i, got, err, want)
						return
					}
					tat = next
				}
			}()
		}
		wg.Wait()
	}
}
