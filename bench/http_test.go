package bench

import (
	"fmt"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/cellrate/cellrate/httplimit"
	"github.com/cellrate/cellrate/keyed"
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
		for _, im := range append(HTTPImpls(), httpLimitBare) {
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

// httpLimitBare is httplimit doing what HoldUp does: the raw
// X-Forwarded-For value as the key (no address parsing) and no fields on
// admitted responses.
var httpLimitBare = HTTPImpl{"httplimit-bare", func(clients int) (func(http.Handler) http.Handler, error) {
	l, err := httplimit.New([]httplimit.Policy{{
		Name:   "perip",
		Client: httplimit.Limit{Events: KeyedEvents, Period: KeyedPeriod, Burst: KeyedEvents},
		Table:  []keyed.Option{keyed.WithCapacity(max(KeyedCapacity(clients), 1024))},
	}}, httplimit.WithDenialHeadersOnly(), httplimit.WithKeyFunc(func(r *http.Request) (httplimit.Key, error) {
		return httplimit.StringKey(r.Header.Get("X-Forwarded-For")), nil
	}))
	if err != nil {
		return nil, err
	}
	return l.Wrap, nil
}}

// serveOp returns run's op: the goroutine's request, from a client drawn
// from addrs (splitmix64 of the state), served; true if admitted.
func serveOp(h http.Handler, addrs []string) func(*int64) bool {
	var goroutine atomic.Int64
	var conns [1 << 12]atomic.Pointer[benchConn] // by goroutine number
	return func(t *int64) bool {
		if *t == 0 {
			*t = goroutine.Add(1) << 40
		}
		c := conns[(*t>>40)%(1<<12)].Load()
		if c == nil {
			c = newBenchConn()
			conns[(*t>>40)%(1<<12)].Store(c)
		}
		*t++
		x := uint64(*t) * 0x9E3779B97F4A7C15
		x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
		x = (x ^ x>>27) * 0x94D049BB133111EB
		x ^= x >> 31
		c.xff[0] = addrs[(x>>32)*uint64(len(addrs))>>32]
		clear(c.w.h)
		c.w.code = 200
		h.ServeHTTP(&c.w, c.r)
		return c.w.code == 200
	}
}

// benchConn is one goroutine's request and response writer.
type benchConn struct {
	r   *http.Request
	xff []string
	w   codeWriter
}

func newBenchConn() *benchConn {
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "127.0.0.1:1"
	c := &benchConn{r: r, xff: []string{""}, w: codeWriter{h: http.Header{}}}
	r.Header["X-Forwarded-For"] = c.xff
	return c
}

// codeWriter is a ResponseWriter that keeps its header map and status.
type codeWriter struct {
	h    http.Header
	code int
}

func (w *codeWriter) Header() http.Header         { return w.h }
func (w *codeWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *codeWriter) WriteHeader(code int)        { w.code = code }

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
