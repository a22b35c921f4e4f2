package bench

import (
	"fmt"
	"net/http"
	"runtime"
	"testing"
)

// BenchmarkHTTP: one request through a middleware's ServeHTTP, in process
// (no network), behind the trivial handler: the latency a middleware adds
// to each request, beside "none". hot10: ten clients, nearly every request
// denied once their bursts are spent (the 429 path, with its fields);
// distinct: a client drawn from 100,000, each decided on once before the
// timing, nearly every request admitted. httplimit-bare is httplimit
// without the address parsing and the fields on admitted responses, as
// HoldUp does without. Each goroutine reuses its own
// request and response writer; clients come through X-Forwarded-For from
// a trusted loopback peer, as in the vegeta runs.
func BenchmarkHTTP(b *testing.B) {
	for _, sc := range []struct {
		name    string
		clients int
	}{{"hot10", 10}, {"distinct", 100_000}} {
		addrs := make([]string, sc.clients)
		for i := range addrs {
			addrs[i] = clientAddr(i)
		}
		for _, im := range append(HTTPImpls(), HTTPLimitBare) {
			var h http.Handler
			for _, g := range goroutines() {
				b.Run(fmt.Sprintf("%s/%s/g=%d", sc.name, im.Name, g), func(b *testing.B) {
					if h == nil {
						mw, err := im.New(sc.clients)
						if err != nil {
							b.Fatal(err)
						}
						h = mw(trivial)
						prime(h, sc.clients)
						runtime.GC()
						b.ResetTimer()
					}
					b.ReportMetric(100*run(b, g, serveOp(h, addrs)), "admit%")
				})
			}
			h = nil
			runtime.GC()
		}
	}
}

// TestHTTPImpls: every middleware names clients by X-Forwarded-For and
// holds one to about its burst at once (window counters to their limit),
// while another client is still admitted.
func TestHTTPImpls(t *testing.T) {
	for _, im := range HTTPImpls() {
		mw, err := im.New(10)
		if err != nil {
			t.Fatal(err)
		}
		h := mw(trivial)
		c := newBenchConn()
		serve := func(addr string) bool {
			c.xff[0] = addr
			clear(c.w.h)
			c.w.code = 200
			h.ServeHTTP(&c.w, c.r)
			return c.w.code == 200
		}
		n := 0
		for range 2 * KeyedEvents {
			if serve(clientAddr(1)) {
				n++
			}
		}
		want := KeyedEvents
		if im.Name == "none" {
			want = 2 * KeyedEvents
		}
		if n < want-1 || n > want+2 || !serve(clientAddr(2)) {
			t.Errorf("%s: admitted %d of %d from one client (want about %d), or denied another", im.Name, n, 2*KeyedEvents, want)
		}
	}
}
