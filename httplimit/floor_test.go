package httplimit

import (
	"github.com/cellrate/cellrate/httplimit/clientkey"
	"net/http"
	"net/netip"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/nanotime"
)

// floorConn is one request and a response writer that keeps its header
// map and status, reused for every request, as a server's connection
// reuses its buffers: what a request costs in the middleware alone.
type floorConn struct {
	r    *http.Request
	xff  []string
	h    http.Header
	code int
}

func (c *floorConn) Header() http.Header         { return c.h }
func (c *floorConn) Write(b []byte) (int, error) { return len(b), nil }
func (c *floorConn) WriteHeader(code int)        { c.code = code }

func newFloorConn(proxied bool) *floorConn {
	r, _ := http.NewRequest("GET", "/", nil)
	c := &floorConn{r: r, xff: []string{""}, h: http.Header{}}
	if proxied {
		r.RemoteAddr = "127.0.0.1:1"
		r.Header["X-Forwarded-For"] = c.xff
	}
	return c
}

// serve serves one request from addr (through X-Forwarded-For from a
// loopback proxy if proxied, else as the peer) and reports whether the
// next handler served it.
func (c *floorConn) serve(h http.Handler, addr string, proxied bool) bool {
	if proxied {
		c.xff[0] = addr
	} else {
		c.r.RemoteAddr = addr
	}
	clear(c.h)
	c.code = http.StatusOK
	h.ServeHTTP(c, c.r)
	return c.code == http.StatusOK
}

var floorOK = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(floorBody) })

var floorBody = []byte("ok")

// floorHandler is the benchmarks' middleware: 100 requests a second per
// client, bursts of 100, a table of 5/4 slots per client, keyed as
// proxied says, primed with one request per client.
func floorHandler(tb testing.TB, clients int, proxied bool) (http.Handler, []string) {
	key := clientkey.Peer
	if proxied {
		var err error
		key, err = clientkey.Proxy("X-Forwarded-For", netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"))
		if err != nil {
			tb.Fatal(err)
		}
	}
	lim := mustNew(tb, []Policy{{Name: "perip", Client: Rate(100, time.Second, 100, keyed.WithCapacity(max(clients*5/4, 1024))), Key: key}})
	h := lim.Wrap(floorOK)
	addrs := make([]string, clients)
	for i := range addrs {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String()
		if !proxied {
			a += ":" + strconv.Itoa(1024+i%60000)
		}
		addrs[i] = a
	}
	c := newFloorConn(proxied)
	for _, a := range addrs {
		c.serve(h, a, proxied)
	}
	return h, addrs
}

// BenchmarkFloor: one request through the middleware's ServeHTTP in
// process, one goroutine, a reused request and writer whose fields are
// cleared each time, from 10 clients (nearly every request denied: the
// 429 path) or 100,000 (nearly every request admitted), named by
// X-Forwarded-For from a trusted loopback proxy (proxy) or by RemoteAddr
// (peer). "none" is the handler alone.
func BenchmarkFloor(b *testing.B) {
	for _, n := range []int{10, 100_000} {
		for _, how := range []string{"none", "proxy", "peer"} {
			b.Run(strconv.Itoa(n)+"/"+how, func(b *testing.B) {
				proxied := how != "peer"
				h, addrs := floorHandler(b, n, proxied)
				if how == "none" {
					h = floorOK
				}
				c := newFloorConn(proxied)
				runtime.GC()
				b.ReportAllocs()
				b.ResetTimer()
				x := uint64(88172645463325252)
				for range b.N {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
					c.serve(h, addrs[(x>>32)*uint64(n)>>32], proxied)
				}
			})
		}
	}
}

// BenchmarkInstr runs b.N requests of BenchmarkFloor's proxy or peer case
// in a function of its own, so that an instruction counter counts the
// requests and nothing else:
//
//	go test -c -o /tmp/httplimit.test ./httplimit
//	GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind \
//	  --toggle-collect='*httplimit.instrServe' /tmp/httplimit.test \
//	  -test.run XXX -test.bench 'Instr/100000/proxy$' -test.benchtime 200000x
//
// counts b.N+1 requests (the harness runs b.N = 1 first).
func BenchmarkInstr(b *testing.B) {
	for _, n := range []int{10, 100_000} {
		for _, how := range []string{"proxy", "peer"} {
			b.Run(strconv.Itoa(n)+"/"+how, func(b *testing.B) {
				proxied := how == "proxy"
				h, addrs := floorHandler(b, n, proxied)
				c := newFloorConn(proxied)
				runtime.GC()
				growStack(0)
				b.ResetTimer()
				instrServe(c, h, addrs, proxied, b.N)
			})
		}
	}
}

// growStack grows the goroutine's stack well past what a request needs,
// so that no stack copy happens inside instrServe: callgrind's call
// tracking loses its place across one.
//
//go:noinline
func growStack(depth int) byte {
	var pad [1 << 10]byte
	pad[depth] = byte(depth)
	if depth < 63 {
		return growStack(depth+1) + pad[depth]
	}
	return pad[depth]
}

//go:noinline
func instrServe(c *floorConn, h http.Handler, addrs []string, proxied bool, count int) {
	n := uint64(len(addrs))
	x := uint64(88172645463325252)
	for range count {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		c.serve(h, addrs[(x>>32)*n>>32], proxied)
	}
}

// BenchmarkSteps: each step of BenchmarkFloor's proxied request alone,
// with the same draw of a client: naming it (clientkey.Proxy), reading the clock,
// the keyed decision (with its own clock read), and writing the fields of
// an admitted response (RateLimit-Policy, RateLimit) and of a denied one
// (those, Retry-After, the default denial's Content-Type and
// X-Content-Type-Options, Content-Length deleted) into a cleared map;
// "draw" is the draw alone. Compare the steps with benchstat, or in pairs
// (bench/paired).
func BenchmarkSteps(b *testing.B) {
	for _, n := range []int{10, 100_000} {
		key, err := clientkey.Proxy("X-Forwarded-For", netip.MustParsePrefix("127.0.0.0/8"))
		if err != nil {
			b.Fatal(err)
		}
		tb, err := keyed.New(100, time.Second, 100, keyed.WithCapacity(max(n*5/4, 1024)))
		if err != nil {
			b.Fatal(err)
		}
		addrs := make([]netip.Addr, n)
		strs := make([]string, n)
		for i := range addrs {
			addrs[i] = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
			strs[i] = addrs[i].String()
			tb.TakeAddrAt(addrs[i], nanotime.Now(), 1)
		}
		policy, rl, retry := []string{`"perip";q=100;w=1`}, []string{`"perip";r=0;t=1`}, []string{"1"}
		c := newFloorConn(true)
		var sink int64
		for _, st := range []struct {
			name string
			op   func(i int)
		}{
			{"draw", func(i int) { sink += int64(i) }},
			{"name", func(i int) {
				c.xff[0] = strs[i]
				k, _ := key(c.r)
				sink += int64(parts(&k).Kind)
			}},
			{"clock", func(int) { sink += nanotime.Now() }},
			{"keyed", func(i int) {
				res, _, _ := tb.TakeAddrAt(addrs[i], nanotime.Now(), 1)
				sink += res.Remaining
			}},
			{"fields-admitted", func(int) {
				clear(c.h)
				c.h[hdrPolicy], c.h[hdrRateLimit] = policy, rl
			}},
			{"fields-denied", func(int) {
				clear(c.h)
				c.h[hdrPolicy], c.h[hdrRateLimit], c.h[hdrRetryAfter] = policy, rl, retry
				delete(c.h, "Content-Length")
				c.h["Content-Type"], c.h["X-Content-Type-Options"] = textPlain, nosniff
			}},
		} {
			b.Run(strconv.Itoa(n)+"/"+st.name, func(b *testing.B) {
				x := uint64(88172645463325252)
				for range b.N {
					x ^= x << 13
					x ^= x >> 7
					x ^= x << 17
					st.op(int((x >> 32) * uint64(n) >> 32))
				}
			})
		}
		if sink == 42 {
			b.Log(sink)
		}
	}
}
