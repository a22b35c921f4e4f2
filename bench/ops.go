package bench

import (
	"math/rand/v2"
	"net/http"
	"sync/atomic"

	"github.com/cellrate/cellrate/bench/paired"
)

// The cases the report measures in pairs (package paired): each Case's
// New gives a goroutine its own loop, with its own injected clock, key
// draws and request.

// step is how far an injected clock moves per call, in ns.
const step = 100

// LimiterCase is l deciding one unit per operation, at its own clock or,
// if injected, at a time that moves 100ns per operation.
func LimiterCase(name string, l Limiter, injected bool) paired.Case {
	return paired.Case{Name: name, New: func() func(int) {
		var t int64
		if injected {
			return func(n int) {
				for range n {
					t += step
					l.AllowNAt(t, 1)
				}
			}
		}
		return func(n int) {
			for range n {
				l.Allow()
			}
		}
	}}
}

// KeyedCase is l deciding for a key drawn uniformly from keys per
// operation.
func KeyedCase(name string, l KeyedLimiter, keys []string) paired.Case {
	var goroutine atomic.Int64
	return paired.Case{Name: name, New: func() func(int) {
		var t int64 = goroutine.Add(1) << 40
		return func(n int) {
			for range n {
				t++
				l.Allow(keys[draw(t, len(keys))])
			}
		}
	}}
}

// HTTPCase is h serving one request per operation, from a client drawn
// uniformly from clients (addresses by ClientAddrs), through
// X-Forwarded-For from a trusted loopback peer.
func HTTPCase(name string, h http.Handler, addrs []string) paired.Case {
	var goroutine atomic.Int64
	return paired.Case{Name: name, New: func() func(int) {
		var t int64 = goroutine.Add(1) << 40
		c := newBenchConn()
		return func(n int) {
			for range n {
				t++
				c.serve(h, addrs[draw(t, len(addrs))])
			}
		}
	}}
}

// ClientAddrs returns the addresses of n clients, as the HTTP runs name
// them.
func ClientAddrs(n int) []string {
	addrs := make([]string, n)
	for i := range addrs {
		addrs[i] = clientAddr(i)
	}
	return addrs
}

// Trivial is the handler behind every middleware.
func Trivial() http.Handler { return trivial }

// Prime decides on each of clients once, through h.
func Prime(h http.Handler, clients int) { prime(h, clients) }

// Keys returns n distinct random 16-byte keys.
func Keys(n int) []string { return keysOf(n) }

// draw maps a counter to a uniform index below n (splitmix64).
func draw(t int64, n int) int {
	x := uint64(t) * 0x9E3779B97F4A7C15
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	x ^= x >> 31
	return int((x >> 32) * uint64(n) >> 32)
}

// keysOf returns n distinct random 16-byte keys.
func keysOf(n int) []string {
	r := rand.New(rand.NewPCG(uint64(n), 16))
	keys := make([]string, n)
	seen := make(map[string]bool, n)
	for i := range keys {
		var b [16]byte
		for {
			for j := range b {
				b[j] = byte(r.Uint32())
			}
			if !seen[string(b[:])] {
				break
			}
		}
		keys[i] = string(b[:])
		seen[keys[i]] = true
	}
	return keys
}

// drawOp turns an op on a key and a time into run's op: run gives each
// goroutine a state starting at 0, which holds its number (high bits, set
// on first use) and its call count; the key is a uniform draw from keys,
// the time moves 100ns per call.
func drawOp(keys []string, op func(key string, now int64) bool) func(*int64) bool {
	var goroutine atomic.Int64
	return func(t *int64) bool {
		if *t == 0 {
			*t = goroutine.Add(1) << 40
		}
		*t++
		return op(keys[draw(*t, len(keys))], (*t&(1<<40-1))*step)
	}
}

// serveOp returns run's op: the goroutine's request, from a client drawn
// from addrs, served; true if admitted.
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
		return c.serve(h, addrs[draw(*t, len(addrs))])
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

// serve serves the request from addr through h, reusing the request and
// the header map; true if admitted.
func (c *benchConn) serve(h http.Handler, addr string) bool {
	c.xff[0] = addr
	clear(c.w.h)
	c.w.code = 200
	h.ServeHTTP(&c.w, c.r)
	return c.w.code == 200
}

// codeWriter is a ResponseWriter that keeps its header map and status.
type codeWriter struct {
	h    http.Header
	code int
}

func (w *codeWriter) Header() http.Header         { return w.h }
func (w *codeWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *codeWriter) WriteHeader(code int)        { w.code = code }
