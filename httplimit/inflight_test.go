package httplimit

import (
	"context"
	"github.com/cellrate/cellrate/httplimit/clientkey"
	"github.com/cellrate/cellrate/httplimit/internal/keypart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellrate/cellrate/concurrency"
)

// gate is a handler that holds each request until the test opens it, and
// tells the test when a request has entered.
type gate struct {
	entered chan struct{}
	open    chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 64), open: make(chan struct{})} }

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.entered <- struct{}{}
	<-g.open
}

// inFlight sends n requests from client key at once, waits until want of
// them are in the handler, and returns the status of each one that was
// answered without entering it (their count is n - want).
func inFlight(t *testing.T, c *http.Client, url, key string, n, want int, g *gate) []int {
	t.Helper()
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("K", key)
			res, err := c.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			codes <- res.StatusCode
		}()
	}
	for range want {
		select {
		case <-g.entered:
		case <-time.After(10 * time.Second):
			t.Fatal("requests did not reach the handler")
		}
	}
	var out []int
	for range n - want {
		select {
		case code := <-codes:
			out = append(out, code)
		case <-time.After(10 * time.Second):
			t.Fatal("a request over the cap was not answered")
		}
	}
	t.Cleanup(wg.Wait)
	return out
}

// TestClientInFlight: a client's requests in flight never pass its cap
// (the rest are answered 503 at once, taking no rate), other clients are
// not held by it, and every slot is given back when the handler returns.
func TestClientInFlight(t *testing.T) {
	var clk clock
	g := newGate()
	lim := mustNew(t, []Policy{{Name: "p", Key: clientkey.Header("K"), ClientInFlight: 2,
		Client: Rate(1, time.Hour, 3)}}, WithClock(clk.now))
	url, c := startServer(t, "tcp4", lim.Wrap(g))
	if got := inFlight(t, c, url, "a", 4, 2, g); len(got) != 2 || got[0] != 503 || got[1] != 503 {
		t.Fatalf("over the cap: %v, want two 503s", got)
	}
	if got := inFlight(t, c, url, "b", 1, 1, g); len(got) != 0 {
		t.Fatalf("another client: %v", got)
	}
	close(g.open)
	// The 503s took no rate: "a" has one of its burst of 3 left.
	deadline := time.Now().Add(10 * time.Second)
	for lim.policies[0].flights.held() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := lim.policies[0].flights.held(); n != 0 {
		t.Fatalf("%d slots held after every request ended", n)
	}
	for i, want := range []int{200, 429} {
		if res := get(t, c, url, "K", "a"); res.StatusCode != want {
			t.Fatalf("request %d after: %d, want %d", i, res.StatusCode, want)
		}
	}
	// A rate denial holds no slot.
	if n := lim.policies[0].flights.held(); n != 0 {
		t.Fatalf("%d slots held after a rate denial", n)
	}
	if st := lim.Stats()["p"]; st.Admitted != 4 || st.Denied != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// held is the requests the sketch counts in flight (each counts once in
// every row).
func (f *flights) held() int {
	n := 0
	for i := range f.rows[0] {
		n += int(f.rows[0][i].Load())
	}
	return n
}

// TestGlobalInFlight: a concurrency.Limiter shared by two policies caps
// their requests in flight together; its slots come back when the handler
// returns, and a request the rates deny takes none.
func TestGlobalInFlight(t *testing.T) {
	var clk clock
	g := newGate()
	cl, err := concurrency.NewFixed(3)
	if err != nil {
		t.Fatal(err)
	}
	lim := mustNew(t, []Policy{
		{Name: "a", Routes: []string{"/a"}, Key: clientkey.Header("K"), InFlight: cl, Client: Rate(1, time.Hour, 5)},
		{Name: "b", Routes: []string{"/b"}, Key: clientkey.Header("K"), InFlight: cl},
	}, WithClock(clk.now))
	url, c := startServer(t, "tcp4", lim.Wrap(g))
	if got := inFlight(t, c, url+"/a", "x", 2, 2, g); len(got) != 0 {
		t.Fatalf("/a: %v", got)
	}
	if got := inFlight(t, c, url+"/b", "y", 3, 1, g); len(got) != 2 || got[0] != 503 || got[1] != 503 {
		t.Fatalf("/b over the shared cap: %v, want two 503s", got)
	}
	if cl.InFlight() != 3 {
		t.Fatalf("%d in flight, want 3", cl.InFlight())
	}
	close(g.open)
	deadline := time.Now().Add(10 * time.Second)
	for cl.InFlight() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	// "x" spent 2 of 5 on /a; 3 more pass, the fourth is a rate denial and
	// holds no slot.
	for i, want := range []int{200, 200, 200, 429} {
		if res := get(t, c, url+"/a", "K", "x"); res.StatusCode != want {
			t.Fatalf("request %d after: %d, want %d", i, res.StatusCode, want)
		}
	}
	if cl.InFlight() != 0 {
		t.Fatalf("%d in flight after every request ended", cl.InFlight())
	}
}

// TestFlightsSketch: a key refused in its second row gives back what it
// counted in the first; a key never holds more than the cap, alone or
// sharing a counter, also from many goroutines at once.
func TestFlightsSketch(t *testing.T) {
	f := newFlights(2)
	// a and b share their row-1 counter and not their row-0 one.
	ka := clientkey.String("a")
	a := parts(&ka)
	var b *keypart.Key
	for i := 0; ; i++ {
		kb := clientkey.String("b" + strconv.Itoa(i))
		b = parts(&kb)
		if f.slot(1, b) == f.slot(1, a) && f.slot(0, b) != f.slot(0, a) {
			break
		}
	}
	for range 2 {
		if _, ok := f.acquire(a); !ok {
			t.Fatal("a refused under its cap")
		}
	}
	if _, ok := f.acquire(b); ok {
		t.Fatal("b admitted past a full shared counter")
	}
	if n := f.rows[0][f.slot(0, b)].Load(); n != 0 {
		t.Fatalf("b's refusal left %d counted in its first row", n)
	}
	// Many goroutines, one key: never more than the cap at once.
	g := newFlights(3)
	var now, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2000 {
				s, ok := g.acquire(a)
				if !ok {
					continue
				}
				n := now.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				now.Add(-1)
				g.release(s)
			}
		}()
	}
	wg.Wait()
	if most.Load() > 3 || g.held() != 0 {
		t.Fatalf("%d in flight at once under a cap of 3, %d left held", most.Load(), g.held())
	}
}

// TestBusyDecision: a denial by a cap in flight reaches the deny handler
// naming no limit, with a wait of 1 s, and the client's key.
func TestBusyDecision(t *testing.T) {
	var got []Decision
	lim := mustNew(t, []Policy{{Name: "p", Key: clientkey.Header("K"), ClientInFlight: 1,
		Client: Rate(1, time.Hour, 3)}},
		WithDenyHandler(func(w http.ResponseWriter, r *http.Request, d Decision) {
			got = append(got, d)
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
	var h http.Handler
	inner := httptest.NewRecorder()
	h = lim.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/outer" { // holds the client's one slot meanwhile
			r := httptest.NewRequest("GET", "/inner", nil)
			r.Header.Set("K", "a")
			h.ServeHTTP(inner, r)
		}
	}))
	r := httptest.NewRequest("GET", "/outer", nil)
	r.Header.Set("K", "a")
	outer := httptest.NewRecorder()
	h.ServeHTTP(outer, r)
	if outer.Code != 200 || inner.Code != 503 || inner.Header().Get("Retry-After") != "1" {
		t.Fatalf("outer %d, inner %d %v", outer.Code, inner.Code, inner.Header())
	}
	if len(got) != 1 || got[0].Limit != "" || got[0].RetryAfter != time.Second ||
		got[0].Policy != "p" || got[0].Key.String() != "a" {
		t.Fatalf("decisions %+v", got)
	}
}

// TestFlightReleased: a request gives its slots back however the handler
// ends, by a panic or when its client goes away, so that no client is
// locked out after; a request the error handler lets through holds no
// slot while it is served.
func TestFlightReleased(t *testing.T) {
	var clk clock
	all, err := concurrency.NewFixed(1)
	if err != nil {
		t.Fatal(err)
	}
	open := make(chan struct{})
	entered := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/panic":
			panic(http.ErrAbortHandler)
		case "/gone":
			<-r.Context().Done()
		case "/open":
			entered <- struct{}{}
			<-open
		}
	})
	lim := mustNew(t, []Policy{{Name: "p", ClientInFlight: 1, InFlight: all, Client: Rate(1, time.Nanosecond, 1e6),
		Cost: func(r *http.Request) int64 { return 1 + 1e7*boolInt(r.URL.Path == "/open") }}},
		WithClock(clk.now), WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) bool { return true }))
	url, c := startServer(t, "tcp4", lim.Wrap(h))
	free := func(after string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for get(t, c, url).StatusCode != 200 {
			if time.Now().After(deadline) {
				t.Fatalf("locked out after %s", after)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for range 3 {
		if res, err := c.Get(url + "/panic"); err == nil {
			t.Fatalf("a panicking handler answered %d", res.StatusCode)
		}
		free("a panic")
	}
	for range 3 {
		req, _ := http.NewRequest("GET", url+"/gone", nil)
		ctx, cancel := context.WithTimeout(req.Context(), 20*time.Millisecond)
		if _, err := c.Do(req.WithContext(ctx)); err == nil {
			t.Fatal("a request whose client went away was answered")
		}
		cancel()
		free("a client went away")
	}
	done := make(chan int)
	go func() {
		res, err := c.Get(url + "/open")
		if err != nil {
			done <- 0
			return
		}
		res.Body.Close()
		done <- res.StatusCode
	}()
	<-entered
	if res := get(t, c, url); res.StatusCode != 200 {
		t.Errorf("beside a request served unlimited: %d", res.StatusCode)
	}
	close(open)
	if code := <-done; code != 200 {
		t.Errorf("served unlimited: %d", code)
	}
	if st := lim.Stats()["p"]; st.Errors != 1 {
		t.Errorf("stats %+v", st)
	}
}
