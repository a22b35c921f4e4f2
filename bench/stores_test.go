package bench

import (
	"testing"
	"time"
)

// TestStorePairs: each side of each pair builds and admits a first
// decision for every one of 1,000 keys, as the report's admitting runs
// assume.
func TestStorePairs(t *testing.T) {
	keys := Keys(1000)
	for _, p := range StorePairs() {
		for side, mk := range map[string]func(int) (KeyedLimiter, error){"ours": p.Ours, "base": p.Base} {
			l, err := mk(len(keys))
			if err != nil {
				t.Fatalf("%s, %s: %v", p.Name, side, err)
			}
			for _, k := range keys {
				if !l.Allow(k) {
					t.Fatalf("%s, %s: a key's first decision denied", p.Name, side)
				}
			}
		}
	}
}

// TestWindowCounterDecides: the httprate decision counts what it admits
// and denies once the estimate reaches the limit, on either counter.
func TestWindowCounterDecides(t *testing.T) {
	for name, mk := range map[string]func(int) (KeyedLimiter, error){"chirate": newChirate, "local": newHTTPRateLocal} {
		l, err := mk(10)
		if err != nil {
			t.Fatal(err)
		}
		w := l.(*windowCounter)
		for {
			cur := time.Now().UTC().Truncate(storeWindow)
			if w.Allow("k") {
				c, _, err := w.c.Get("k", cur, cur.Add(-storeWindow))
				if err != nil || c == 0 {
					t.Fatalf("%s: admitted but counted %d (%v)", name, c, err)
				}
			}
			// Fill the key's window to the limit: the next decision in
			// it must deny.
			if err := w.c.IncrementBy("k", cur, StoreWindowLimit); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if time.Now().UTC().Truncate(storeWindow) != cur {
				continue // the window turned meanwhile: again
			}
			if w.Allow("k") && time.Now().UTC().Truncate(storeWindow) == cur {
				t.Fatalf("%s: admitted past the limit", name)
			}
			return
		}
	}
}
