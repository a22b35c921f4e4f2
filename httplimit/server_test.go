package httplimit

import (
	"context"
	"errors"
	"expvar"
	"fmt"
	"github.com/cellrate/cellrate/httplimit/clientkey"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/internal/gcrastep"
	"github.com/cellrate/cellrate/internal/race"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
)

// clock is a test clock the test moves.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() int64 { return c.ns.Load() }

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })

// serve starts a real server for h on a loopback listener of network
// ("tcp4" on 127.0.0.1, "tcp6" on [::1]) and returns its URL and a client.
func startServer(t *testing.T, network string, h http.Handler) (string, *http.Client) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "tcp6" {
		addr = "[::1]:0"
	}
	if !loopbackWorks(network) {
		t.Skipf("no %s loopback here", network)
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	srv.Start()
	t.Cleanup(srv.Close)
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Cleanup(c.CloseIdleConnections)
	return srv.URL, c
}

// loopbackWorks reports whether a connection to a listener on network's
// loopback address can be made: not where lo is down (a fresh network
// namespace; cross's -race VM brings lo up in its init), even though
// listening there succeeds.
func loopbackWorks(network string) bool {
	addr := "127.0.0.1:0"
	if network == "tcp6" {
		addr = "[::1]:0"
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return false
	}
	defer ln.Close()
	c, err := net.DialTimeout(network, ln.Addr().String(), 5*time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func get(t *testing.T, c *http.Client, url string, hdr ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

func mustNew(t testing.TB, ps []Policy, opts ...Option) *Limiter {
	t.Helper()
	l, err := New(ps, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// rateLimitField parses `"name";r=R;t=T` (the structured-field check is
// in package stress's header test, with a real parser).
func rateLimitField(t *testing.T, v string) (name string, r, reset int64) {
	t.Helper()
	var ok bool
	var rest string
	if name, rest, ok = strings.Cut(strings.TrimPrefix(v, `"`), `";r=`); !ok {
		t.Fatalf("RateLimit %q", v)
	}
	rs, ts, ok := strings.Cut(rest, ";t=")
	r, e1 := strconv.ParseInt(rs, 10, 64)
	reset, e2 := strconv.ParseInt(ts, 10, 64)
	if !ok || e1 != nil || e2 != nil {
		t.Fatalf("RateLimit %q", v)
	}
	return name, r, reset
}

// TestExactOverSchedule: one client's requests over a real connection, at
// times the test sets, each decided exactly as a twin composition of a
// keyed table and a GCRA (the limiters' own decisions, stepped directly)
// decides the same schedule, with the remaining count in RateLimit; and
// the admissions keep the bucket's bound.
func TestExactOverSchedule(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		t.Run(network, func(t *testing.T) {
			const events, period, burst = 5, 100 * time.Millisecond, 4
			var clk clock
			clk.ns.Store(1e12)
			var cost atomic.Int64
			lim := mustNew(t, []Policy{{Name: "api", Client: Rate(events, period, burst),
				Global: Rate(6, period, 3), Cost: func(*http.Request) int64 { return cost.Load() }}},
				WithClock(clk.now))
			url, c := startServer(t, network, lim.Wrap(okHandler))
			twinT, _ := keyed.New(events, period, burst)
			twinG, _ := gcrastep.NewParams(6, period, 3)
			addr := netip.MustParseAddr("127.0.0.1")
			if network == "tcp6" {
				addr = netip.MustParseAddr("::1")
			}
			cm := &twinKey{t: twinT, addr: addr}
			gm := &twinGlobal{ps: twinG}
			twin, _ := limit.NewAll(cm, gm)
			rng := rand.New(rand.NewPCG(7, 8))
			var uses []bound.Use
			admitted := 0
			for i := range 300 {
				now := clk.ns.Add(rng.Int64N(int64(period) / 3))
				n := 1 + rng.Int64N(2)
				cost.Store(n)
				gm.asked = false
				want, _ := twin.AllowNAt(now, n)
				res := get(t, c, url)
				if got := res.StatusCode == 200; got != want.OK {
					t.Fatalf("request %d at %d (cost %d): status %d, twin %+v", i, now, n, res.StatusCode, want)
				}
				name, r, reset := rateLimitField(t, res.Header.Get("RateLimit"))
				wantName, wantR, wait := "api", cm.r.Remaining, int64(0)
				if want.OK {
					if gm.r.Remaining < cm.r.Remaining {
						wantName, wantR = "api-global", gm.r.Remaining
					}
				} else {
					// The denial took nothing: each limit holds what a
					// pure step at now sees, and waits its own wait.
					_, g, _ := twinG.Step(gm.s, now, n)
					gRem := g.Remaining + n*boolInt(g.OK)
					cRem := cm.r.Remaining + n*boolInt(cm.r.OK) // refunded when the global one denied
					wantR, wait = min(cRem, gRem), int64(cm.r.RetryAfter)*boolInt(!cm.r.OK)
					if int64(g.RetryAfter) > wait {
						wantName, wait = "api-global", int64(g.RetryAfter)
					}
				}
				if name != wantName || r != wantR {
					t.Fatalf("request %d: RateLimit %q, want %s r=%d", i, res.Header.Get("RateLimit"), wantName, wantR)
				}
				if want.OK {
					admitted++
					uses = append(uses, bound.Use{At: now, Cost: n})
					continue
				}
				ra, err := strconv.ParseInt(res.Header.Get("Retry-After"), 10, 64)
				if res.StatusCode != 429 || err != nil || ra < 1 || ra != reset || ra != max(1, (wait+1e9-1)/1e9) {
					t.Fatalf("request %d: %d Retry-After %q (t=%d), twin wait %d", i, res.StatusCode, res.Header.Get("Retry-After"), reset, wait)
				}
			}
			if admitted < 50 || admitted > 250 {
				t.Fatalf("%d admitted of 300: the schedule does not test both ways", admitted)
			}
			if err := bound.CheckSlack(uses, burst, 1<<20, events, uint64(period)); err != nil {
				t.Fatal(err)
			}
			st := lim.Stats()["api"]
			if st.Admitted != int64(admitted) || st.Denied != int64(300-admitted) {
				t.Fatalf("stats %+v, want %d admitted", st, admitted)
			}
		})
	}
}

// twinKey and twinGlobal are the test's own members over the limiters,
// recording their last Results.
type twinKey struct {
	t    *keyed.Table
	addr netip.Addr
	r    limit.Result
}

func (m *twinKey) AllowAt(now int64) bool { r, _ := m.AllowNAt(now, 1); return r.OK }
func (m *twinKey) AllowNAt(now, n int64) (limit.Result, error) {
	r, _, err := m.TakeAt(now, n)
	return r, err
}
func (m *twinKey) TakeAt(now, n int64) (r limit.Result, rc limit.Receipt, err error) {
	r, rc, err = m.t.TakeAddrAt(m.addr, now, n)
	m.r = r
	return
}
func (m *twinKey) Refund(rc limit.Receipt) { m.t.Refund(rc) }

type twinGlobal struct {
	ps    gcrastep.Params
	s     gcrastep.State // one goroutine runs the twin: a plain variable
	r     limit.Result
	asked bool
}

func (m *twinGlobal) AllowAt(now int64) bool { r, _ := m.AllowNAt(now, 1); return r.OK }
func (m *twinGlobal) AllowNAt(now, n int64) (limit.Result, error) {
	r, _, err := m.TakeAt(now, n)
	return r, err
}
func (m *twinGlobal) TakeAt(now, n int64) (r limit.Result, rc limit.Receipt, err error) {
	next, r, err := m.ps.Step(m.s, now, n)
	if r.OK && next != m.s {
		rc = limit.Receipt{At: now, N: n, Before: [2]uint64{uint64(m.s)}, After: [2]uint64{uint64(next)}}
		m.s = next
	}
	m.r, m.asked = r, true
	return r, rc, err
}
func (m *twinGlobal) Refund(rc limit.Receipt) {
	if rc.N != 0 && m.s == gcrastep.State(rc.After[0]) {
		m.s = gcrastep.State(rc.Before[0])
	}
}

// TestManyClientsConcurrently: 64 clients, named by X-Forwarded-For from a
// trusted loopback proxy, half over IPv4 and half over IPv6, each sending
// more requests than its burst from several goroutines at once, at frozen
// times: each gets exactly its burst per step (and its refill between
// steps), never more; with a global limit below the clients' sum, exactly
// the global burst is admitted in all.
func TestManyClientsConcurrently(t *testing.T) {
	const clients, burst, steps = 64, 3, 3
	var clk clock
	lim := mustNew(t, []Policy{{Name: "perip", Client: Rate(1, time.Second, burst),
		Key: mustProxy(t, xff, loopback...)}}, WithClock(clk.now))
	url4, c4 := startServer(t, "tcp4", lim.Wrap(okHandler))
	url6, c6 := url4, c4
	if loopbackWorks("tcp6") {
		url6, c6 = startServer(t, "tcp6", lim.Wrap(okHandler))
	}
	client := func(i int) string {
		if i%2 == 0 {
			return fmt.Sprintf("198.51.100.%d", i)
		}
		return fmt.Sprintf("2001:db8:%x::1", i) // a /64 of its own
	}
	admitted := make([]atomic.Int64, clients)
	for step := range steps {
		if step > 0 {
			clk.ns.Add(int64(2 * time.Second)) // two tokens back each
		}
		var wg sync.WaitGroup
		for i := range clients {
			for g := range 2 {
				wg.Go(func() {
					url, c := url4, c4
					if (i+g)%2 == 1 {
						url, c = url6, c6
					}
					for range burst + 2 {
						if get(t, c, url, "X-Forwarded-For", client(i)).StatusCode == 200 {
							admitted[i].Add(1)
						}
					}
				})
			}
		}
		wg.Wait()
		want := int64(burst + 2*step)
		for i := range clients {
			if got := admitted[i].Load(); got != want {
				t.Fatalf("step %d: client %s admitted %d, want %d", step, client(i), got, want)
			}
		}
	}

	// A global limit below the clients' sum, and the same /64 grouped.
	clk.ns.Store(0)
	lim = mustNew(t, []Policy{{Name: "perip", Client: Rate(1, time.Second, burst),
		Global: Rate(1, time.Second, 50), Key: mustProxy(t, xff, loopback...)}},
		WithClock(clk.now))
	url, c := startServer(t, "tcp4", lim.Wrap(okHandler))
	var total atomic.Int64
	per := make([]atomic.Int64, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			for j := range burst + 1 {
				addr := fmt.Sprintf("2001:db8:0:%x::%x", i, j+1) // same /64 for a client's requests
				if get(t, c, url, "X-Forwarded-For", addr).StatusCode == 200 {
					total.Add(1)
					per[i].Add(1)
				}
			}
		})
	}
	wg.Wait()
	if total.Load() != 50 {
		t.Fatalf("admitted %d under a global burst of 50", total.Load())
	}
	for i := range clients {
		if per[i].Load() > burst {
			t.Fatalf("client %d admitted %d > burst", i, per[i].Load())
		}
	}
}

// TestSpoofing: a client that is not a trusted proxy and sends a new
// X-Forwarded-For (or Forwarded) with each request is held to the limit of
// its own address; the same headers from a trusted proxy name clients.
func TestSpoofing(t *testing.T) {
	var clk clock
	for _, network := range []string{"tcp4", "tcp6"} {
		for _, h := range []string{xff, fwd} {
			for _, trust := range []bool{false, true} {
				var tr []netip.Prefix
				if trust {
					tr = loopback
				} else {
					tr = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
				}
				lim := mustNew(t, []Policy{{Name: "p", Client: Rate(1, time.Second, 2),
					Key: mustProxy(t, h, tr...)}}, WithClock(clk.now))
				url, c := startServer(t, network, lim.Wrap(okHandler))
				ok := 0
				for i := range 10 {
					v := fmt.Sprintf("1.2.3.%d", i)
					if i%2 == 1 {
						v = fmt.Sprintf("2001:db8:%x::1", i)
						if h == fwd {
							v = `"[` + v + `]:443"`
						}
					}
					if h == fwd {
						v = "for=" + v
					}
					if get(t, c, url, h, v).StatusCode == 200 {
						ok++
					}
				}
				if want := map[bool]int{false: 2, true: 10}[trust]; ok != want {
					t.Fatalf("%s %s, trusted %v: %d admitted, want %d", network, h, trust, ok, want)
				}
			}
		}
	}
}

// TestHeaders: the fields on admitted and denied responses, legacy ones,
// the field-free admitted responses of WithHeaders(false, false), a custom
// deny handler and OnDeny, policies by method and path, and costs.
func TestHeaders(t *testing.T) {
	var clk clock
	var denials []Decision
	var mu sync.Mutex
	lim := mustNew(t, []Policy{
		{Name: "writes", Routes: []string{"post /api"}, Cost: fixedCost(2), Client: Rate(1, 8*time.Second, 4)},
		{Name: "api", Routes: []string{"/api/"}, Client: Rate(1, time.Second, 8), Global: Rate(100, time.Second, 100)},
	}, WithClock(clk.now), WithHeaders(true, true), WithDenyHandler(func(w http.ResponseWriter, r *http.Request, d Decision) {
		mu.Lock()
		denials = append(denials, d)
		mu.Unlock()
		denyTooMany(w, r, d)
	}))
	url, c := startServer(t, "tcp4", lim.Wrap(okHandler))
	res := get(t, c, url+"/api/x")
	if p := res.Header.Get("RateLimit-Policy"); p != `"api";q=8;w=8, "api-global";q=100;w=1` {
		t.Fatalf("RateLimit-Policy %q", p)
	}
	if v := res.Header.Get("RateLimit"); v != `"api";r=7;t=1` {
		t.Fatalf("RateLimit %q", v)
	}
	if res.Header.Get("X-RateLimit-Limit") != "8" || res.Header.Get("X-RateLimit-Remaining") != "7" {
		t.Fatalf("legacy %v", res.Header)
	}
	reset, _ := strconv.ParseInt(res.Header.Get("X-RateLimit-Reset"), 10, 64)
	if d := reset - time.Now().Unix(); d < 0 || d > 2 {
		t.Fatalf("X-RateLimit-Reset %d, now %d", reset, time.Now().Unix())
	}
	// Unmatched paths pass with no fields; "/api" itself is not "/api/".
	if res := get(t, c, url+"/apix"); res.StatusCode != 200 || res.Header.Get("RateLimit") != "" {
		t.Fatalf("unmatched: %d %v", res.StatusCode, res.Header)
	}
	// POST /api costs 2 of a burst of 4: two pass, the third is denied
	// with Retry-After 16 (2 tokens at 8s each).
	post := func() *http.Response {
		res, err := c.Post(url+"/api", "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	for i := range 2 {
		if res := post(); res.StatusCode != 200 || res.Header.Get("RateLimit") != fmt.Sprintf(`"writes";r=%d;t=%d`, 2-2*i, 16+16*i) {
			t.Fatalf("post %d: %d %q", i, res.StatusCode, res.Header.Get("RateLimit"))
		}
	}
	res = post()
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "16" || res.Header.Get("RateLimit") != `"writes";r=0;t=16` {
		t.Fatalf("denied post: %d %v", res.StatusCode, res.Header)
	}
	clk.ns.Add(int64(15*time.Second + 999*time.Millisecond))
	if res := post(); res.StatusCode != 429 || res.Header.Get("Retry-After") != "1" {
		t.Fatalf("1ms before: %d Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	clk.ns.Add(int64(time.Millisecond))
	if res := post(); res.StatusCode != 200 {
		t.Fatalf("on time: %d", res.StatusCode)
	}
	mu.Lock()
	if len(denials) != 2 || denials[0].Policy != "writes" || denials[0].Limit != "writes" || denials[0].RetryAfter != 16*time.Second ||
		denials[0].Key.String() != "127.0.0.1" || denials[1].RetryAfter != time.Millisecond {
		t.Fatalf("OnDeny got %+v", denials)
	}
	mu.Unlock()
	// Each policy's counts under its own name.
	if st := lim.Stats(); len(st) != 2 || st["writes"].Admitted != 3 || st["writes"].Denied != 2 ||
		st["api"].Admitted != 1 || st["api"].Denied != 0 || st["api"].Clients.Keys != 1 {
		t.Fatalf("stats %+v", st)
	}

	// A custom deny handler, and no fields on admitted responses.
	lim = mustNew(t, []Policy{{Name: "p", Client: Rate(1, 64*time.Second, 1)}}, WithClock(clk.now),
		WithHeaders(false, false), WithDenyHandler(func(w http.ResponseWriter, r *http.Request, d Decision) {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "slow down, %s", d.Key)
		}))
	url, c = startServer(t, "tcp4", lim.Wrap(okHandler))
	if res := get(t, c, url); res.StatusCode != 200 || len(res.Header.Values("RateLimit")) != 0 {
		t.Fatalf("admitted: %d %v", res.StatusCode, res.Header)
	}
	if res := get(t, c, url); res.StatusCode != 503 || res.Header.Get("Retry-After") != "64" || res.Header.Get("RateLimit") != `"p";r=0;t=64` {
		t.Fatalf("custom denial: %d %v", res.StatusCode, res.Header)
	}
}

// TestBadInput: every way a request cannot be decided, over a real
// server where the request can be sent, each with its documented answer,
// and fail open.
func TestBadInput(t *testing.T) {
	var clk clock
	pol := []Policy{{Name: "p", Client: Rate(1, time.Second, 3),
		Cost: func(r *http.Request) int64 {
			n, _ := strconv.ParseInt(r.URL.Query().Get("cost"), 10, 64)
			return max(n, 1) - 2*boolInt(r.URL.Query().Has("neg"))
		}}}
	lim := mustNew(t, keyedBy(mustProxy(t, xff, loopback...), pol), WithClock(clk.now))
	url, c := startServer(t, "tcp4", lim.Wrap(okHandler))
	for _, tc := range []struct {
		name, path, xff string
		status          int
	}{
		{"malformed", "/", "1.2.3.4.5", 400},
		{"empty element", "/", "1.2.3.4, ", 400},
		{"huge element", "/", strings.Repeat("a", 100<<10), 400},
		{"huge list, client found", "/", strings.Repeat("9.9.9.9,", 10<<10) + "5.6.7.8", 200},
		{"too many trusted hops", "/", strings.Repeat("127.0.0.2,", 33), 400},
		{"cost above burst", "/?cost=4", "5.6.7.9", 413},
		{"negative cost", "/?neg", "5.6.7.9", 500},
	} {
		if res := get(t, c, url+tc.path, "X-Forwarded-For", tc.xff); res.StatusCode != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, res.StatusCode, tc.status)
		}
	}
	if st := lim.Stats()["p"]; st.Errors != 6 || st.Admitted != 1 {
		t.Errorf("stats %+v", st)
	}
	// A clientkey.Func's own error, then fail open.
	boom := errors.New("no api key")
	kf := func(r *http.Request) (clientkey.Key, error) {
		if k := r.Header.Get("Api-Key"); k != "" {
			return clientkey.String(k), nil
		}
		return clientkey.Key{}, boom
	}
	var gotErr error
	lim = mustNew(t, keyedBy(kf, pol), WithClock(clk.now))
	url, c = startServer(t, "tcp4", lim.Wrap(okHandler))
	if res := get(t, c, url); res.StatusCode != 500 {
		t.Errorf("clientkey.Func error: %d", res.StatusCode)
	}
	for i := range 4 {
		if res := get(t, c, url, "Api-Key", "k1"); (res.StatusCode == 200) != (i < 3) {
			t.Errorf("api key request %d: %d", i, res.StatusCode)
		}
	}
	lim = mustNew(t, keyedBy(kf, pol), WithClock(clk.now),
		WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) bool {
			if errors.Is(err, boom) {
				return true // fail open
			}
			gotErr = err
			w.WriteHeader(418)
			return false
		}))
	url, c = startServer(t, "tcp4", lim.Wrap(okHandler))
	for range 5 {
		if res := get(t, c, url); res.StatusCode != 200 {
			t.Errorf("fail open: %d", res.StatusCode)
		}
	}
	if res := get(t, c, url+"?cost=9", "Api-Key", "k"); res.StatusCode != 418 || !errors.Is(gotErr, limit.ErrCostExceedsBurst) {
		t.Errorf("error handler: %d %v", res.StatusCode, gotErr)
	}
	if st := lim.Stats()["p"]; st.Errors != 6 || st.Admitted != 0 {
		t.Errorf("stats %+v", st)
	}
	// RemoteAddr that no TCP server gives: empty, a Unix socket's.
	lim = mustNew(t, pol, WithClock(clk.now))
	for _, ra := range []string{"", "@", "not-an-addr", "[::1"} {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = ra
		lim.Wrap(okHandler).ServeHTTP(rec, r)
		if rec.Code != 500 {
			t.Errorf("RemoteAddr %q: %d", ra, rec.Code)
		}
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestUnixSocket: a real server on a Unix socket has no peer address: the
// default fails closed, a clientkey.Func names its clients.
func TestUnixSocket(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("unix", dir+"/s")
	if err != nil {
		t.Skip(err)
	}
	lim := mustNew(t, []Policy{{Name: "p", Client: Rate(1, time.Minute, 1)}})
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: lim.Wrap(okHandler)}}
	srv.Start()
	defer srv.Close()
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", dir+"/s")
	}}}
	defer c.CloseIdleConnections()
	if res := get(t, c, "http://unix/"); res.StatusCode != 500 {
		t.Fatalf("unix socket: %d", res.StatusCode)
	}
}

func TestNewErrors(t *testing.T) {
	ok := Rate(1, time.Second, 1)
	cases := []struct {
		param string
		ps    []Policy
		opts  []Option
	}{
		{"policies[0].Name", []Policy{{Client: ok}}, nil},
		{"policies[0].Name", []Policy{{Name: "é", Client: ok}}, nil},
		{"policies[0].Client", []Policy{{Name: "a"}}, nil},
		{"policies[0].Client.Burst", []Policy{{Name: "a", Client: Rate(1, time.Second, 1<<40)}}, nil},
		{"policies[0].Client.Capacity", []Policy{{Name: "a", Client: Rate(1, time.Second, 1, keyed.WithCapacity(2))}}, nil},
		{"policies", nil, nil},
		{"policies[0].Routes[1]", []Policy{{Name: "a", Client: ok, Routes: []string{"GET /", "GE T /"}}}, nil},
		{"policies[0].Routes[0]", []Policy{{Name: "a", Client: ok, Routes: []string{""}}}, nil},
		{"policies[0].Routes[0]", []Policy{{Name: "a", Client: ok, Routes: []string{"api/"}}}, nil},
		{"policies[0].Routes[0]", []Policy{{Name: "a", Client: ok, Routes: []string{" /api"}}}, nil},
		{"policies[0].Routes[0]", []Policy{{Name: "a", Client: ok, Routes: []string{"GET  /api"}}}, nil},
		{"policies[0].Routes[0]", []Policy{{Name: "a", Client: ok, Routes: []string{"GET"}}}, nil},
		{"policies[0].Global.Events", []Policy{{Name: "a", Global: Rate(0, time.Second, 1)}}, nil},
		{"policies[0].Client.Events", []Policy{{Name: "a", Client: Rate(0, 0, 0)}}, nil},
		{"policies[0].Global", []Policy{{Name: "a", Global: Rate(1, time.Second, 1, keyed.WithCapacity(1024))}}, nil},
		{"policies[1].Name", []Policy{{Name: "a", Client: ok}, {Name: "a", Client: ok}}, nil},
		{"clock", []Policy{{Name: "a", Client: ok}}, []Option{WithClock(nil)}},
	}
	for _, c := range cases {
		_, err := New(c.ps, c.opts...)
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Param != c.param || pe.Pkg != "httplimit" {
			t.Errorf("%s: %v", c.param, err)
		}
		if err != nil && strings.ContainsAny(err.Error(), "{}") {
			t.Errorf("%s: the message shows a value's unexported fields: %v", c.param, err)
		}
	}
}

// TestStatsJSON: Stats publish through expvar as JSON.
func TestStatsJSON(t *testing.T) {
	lim := mustNew(t, []Policy{{Name: "p", Client: Rate(1, time.Minute, 1)}})
	h := lim.Wrap(okHandler)
	for range 3 {
		r := httptest.NewRequest("GET", "/", nil)
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	s := expvar.Func(func() any { return lim.Stats() }).String()
	if !strings.Contains(s, `{"p":{"Admitted":1,"Denied":2`) {
		t.Fatalf("Var %s", s)
	}
}

// TestDecideAllocs: a decision with its fields allocates nothing where
// the values are the ones formatted at New (r up to 255 admitted, r = 0 and
// t up to 255 denied), and one allocation for the RateLimit and
// Retry-After values otherwise; the default deny handler allocates
// nothing.
func TestDecideAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	r := httptest.NewRequest("GET", "/", nil)
	w := httptest.NewRecorder()
	for _, tc := range []struct {
		name   string
		ps     Policy
		allocs float64
	}{
		{"admitted, r cached", Policy{Name: "p", Client: Rate(1e3, time.Millisecond, 100),
			Global: Rate(1e9, time.Second, 1e6)}, 0},
		{"admitted, r formatted", Policy{Name: "p", Global: Rate(1e9, time.Second, 1e6)}, 1},
		{"denied, cached", Policy{Name: "p", Client: Rate(1, time.Minute, 1)}, 0},
		{"denied, t formatted", Policy{Name: "p", Client: Rate(1, time.Hour, 1)}, 1},
	} {
		lim := mustNew(t, []Policy{tc.ps})
		lim.serve(w, r, &hold{})
		if a := testing.AllocsPerRun(1000, func() { lim.serve(w, r, &hold{}) }); a != tc.allocs {
			t.Errorf("%s: %v allocations per decision, want %v", tc.name, a, tc.allocs)
		}
	}
}

// BenchmarkServe: one request through ServeHTTP in process, one
// goroutine, a recorder whose fields are cleared each time, from 10
// clients (nearly all denied: the 429 path) or 100,000 (nearly all
// admitted), keyed by address.
func BenchmarkServe(b *testing.B) {
	for _, n := range []int{10, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			lim := mustNew(b, []Policy{{Name: "perip", Client: Rate(100, time.Second, 100, keyed.WithCapacity(max(n*5/4, 1024)))}})
			h := lim.Wrap(okHandler)
			addrs := make([]string, n)
			for i := range addrs {
				addrs[i] = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String() + ":1"
			}
			r := httptest.NewRequest("GET", "/", nil)
			w := httptest.NewRecorder()
			for _, a := range addrs {
				r.RemoteAddr = a
				h.ServeHTTP(w, r)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				r.RemoteAddr = addrs[uint64(i)*0x9E3779B97F4A7C15>>32%uint64(n)]
				clear(w.Header())
				w.Body.Reset()
				h.ServeHTTP(w, r)
			}
		})
	}
}

// fixedCost is a Policy.Cost of n units for every request.
func fixedCost(n int64) func(*http.Request) int64 {
	return func(*http.Request) int64 { return n }
}

// keyedBy returns ps, each keyed by f.
func keyedBy(f clientkey.Func, ps []Policy) []Policy {
	out := append([]Policy(nil), ps...)
	for i := range out {
		out[i].Key = f
	}
	return out
}

const xff, fwd = "X-Forwarded-For", "Forwarded"

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func mustProxy(t testing.TB, h string, trusted ...netip.Prefix) clientkey.Func {
	t.Helper()
	f, err := clientkey.Proxy(h, trusted...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
