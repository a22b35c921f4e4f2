package httplimit

import (
	"errors"
	"github.com/cellrate/cellrate/httplimit/clientkey"
	"github.com/cellrate/cellrate/internal/race"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// TestRouteMethodTokens: a route's method is any RFC 9110 token, the
// ends of each range of letters and digits and every other token
// character included, and nothing else is one.
func TestRouteMethodTokens(t *testing.T) {
	for _, m := range []string{"a", "z", "A", "Z", "0", "9", "az09AZ", "!#$%&'*+-.^_`|~", "get"} {
		if _, err := New([]Policy{{Name: "p", Routes: []string{m + " /"}, Client: Rate(1, time.Second, 1)}}); err != nil {
			t.Errorf("method %q refused: %v", m, err)
		}
	}
	for _, m := range []string{"@", "[", "`a{", "/", ":", "\"", "(", ")", ",", ";", "=", "?", "\\", "\x7f", "é", "\t", "{", "}", "`" + "\x00"} {
		_, err := New([]Policy{{Name: "p", Routes: []string{m + " /"}, Client: Rate(1, time.Second, 1)}})
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Param != "policies[0].Routes[0]" {
			t.Errorf("method %q: %v", m, err)
		}
	}
}

// TestNamePrintable: a policy's name is printable ASCII, space and "~"
// included, control characters and DEL not.
func TestNamePrintable(t *testing.T) {
	for _, name := range []string{" ", "~", "a b~"} {
		if _, err := New([]Policy{{Name: name, Client: Rate(1, time.Second, 1)}}); err != nil {
			t.Errorf("name %q refused: %v", name, err)
		}
	}
	for _, name := range []string{"\x1f", "\x7f", "a\x00", "\x80"} {
		_, err := New([]Policy{{Name: name, Client: Rate(1, time.Second, 1)}})
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Param != "policies[0].Name" {
			t.Errorf("name %q: %v", name, err)
		}
	}
	_, err := New([]Policy{{Name: "p", ClientInFlight: -1}})
	var pe *limit.ParamError
	if !errors.As(err, &pe) || pe.Param != "policies[0].ClientInFlight" {
		t.Errorf("a negative cap: %v", err)
	}
}

// TestFieldsAtTheCacheEdge: the RateLimit and Retry-After values are the
// same whether they come from the values formatted at New (r and t up to
// 255) or are formatted for the request (256 and up).
func TestFieldsAtTheCacheEdge(t *testing.T) {
	var clk clock
	// Admitted with 255, 256 and 257 left of a burst of 300.
	lim := mustNew(t, []Policy{{Name: "p", Client: Rate(1, time.Second, 300),
		Cost: func(r *http.Request) int64 { n, _ := strconv.ParseInt(r.Header.Get("N"), 10, 64); return n }}}, WithClock(clk.now))
	h := lim.Wrap(okHandler)
	for _, tc := range []struct {
		n    string
		want string
	}{{"43", `"p";r=257;t=43`}, {"1", `"p";r=256;t=44`}, {"1", `"p";r=255;t=45`}} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("N", tc.n)
		h.ServeHTTP(w, r)
		if got := w.Header().Get("RateLimit"); w.Code != 200 || got != tc.want {
			t.Errorf("cost %s: %d %q, want %q", tc.n, w.Code, got, tc.want)
		}
	}
	// Denied with a wait of 255, 256 and 257 s.
	for _, secs := range []int64{255, 256, 257} {
		lim := mustNew(t, []Policy{{Name: "p", Client: Rate(1, time.Duration(secs)*time.Second, 1)}}, WithClock(clk.now))
		h := lim.Wrap(okHandler)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		s := strconv.FormatInt(secs, 10)
		if w.Code != 429 || w.Header().Get("RateLimit") != `"p";r=0;t=`+s || w.Header().Get("Retry-After") != s {
			t.Errorf("wait %d s: %d %v", secs, w.Code, w.Header())
		}
	}
}

// TestTies: admitted with as many units left in the client limit as in
// the global one, the RateLimit field names the client's; denied with as
// long a wait in both, it names the client's too.
func TestTies(t *testing.T) {
	var clk clock
	lim := mustNew(t, []Policy{{Name: "p", Client: Rate(1, time.Second, 2), Global: Rate(1, time.Second, 2)}}, WithClock(clk.now))
	h := lim.Wrap(okHandler)
	for i, want := range []string{`"p";r=1;t=1`, `"p";r=0;t=2`, `"p";r=0;t=1`} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		if got := w.Header().Get("RateLimit"); got != want {
			t.Errorf("request %d: %d %q, want %q", i, w.Code, got, want)
		}
	}
}

// TestRemainingAcrossLimits: r is the least any limit holds for the next
// request, with what a denial took given back: a client limit that
// admits while the global one denies holds its units again, and a global
// limit read for a denial by the client's holds what it would have
// given.
func TestRemainingAcrossLimits(t *testing.T) {
	var clk clock
	send := func(h http.Handler, client string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("K", client)
		h.ServeHTTP(w, r)
		return w
	}
	// Global denies a client its own limit admits: the client's 2 are
	// back, the global limit holds 1.
	lim := mustNew(t, []Policy{{Name: "p", Key: clientkey.Header("K"), Cost: fixedCost(2),
		Client: Rate(1, time.Second, 2), Global: Rate(1, time.Second, 3)}}, WithClock(clk.now))
	h := lim.Wrap(okHandler)
	if w := send(h, "A"); w.Code != 200 {
		t.Fatalf("A: %d", w.Code)
	}
	if w := send(h, "B"); w.Code != 429 || w.Header().Get("RateLimit") != `"p-global";r=1;t=1` {
		t.Fatalf("B: %d %q", w.Code, w.Header().Get("RateLimit"))
	}
	// The client's limit denies while the global one holds exactly the
	// cost: r is the client's 1, not the global 0 left after a take.
	lim = mustNew(t, []Policy{{Name: "p", Key: clientkey.Header("K"), Cost: fixedCost(2),
		Client: Rate(1, time.Second, 3), Global: Rate(1, time.Second, 4)}}, WithClock(clk.now))
	h = lim.Wrap(okHandler)
	if w := send(h, "A"); w.Code != 200 {
		t.Fatalf("A: %d", w.Code)
	}
	if w := send(h, "A"); w.Code != 429 || w.Header().Get("RateLimit") != `"p";r=1;t=1` {
		t.Fatalf("A again: %d %q", w.Code, w.Header().Get("RateLimit"))
	}
}

// TestRetrySeconds: a wait in whole seconds is rounded up, at least 1,
// exactly up to the end of time.
func TestRetrySeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{
		{0, 1}, {1, 1}, {time.Second, 1}, {time.Second + 1, 2}, {2 * time.Second, 2}, {1500 * time.Millisecond, 2},
		{limit.Never - time.Second, 9223372036}, {limit.Never - time.Second + 1, 9223372036}, {limit.Never, 9223372037},
		{limit.Never / time.Second * time.Second, 9223372036},
	} {
		if got := retrySeconds(tc.d); got != tc.want {
			t.Errorf("retrySeconds(%d) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

// TestCacheEdgeAllocs: an admitted response's RateLimit value is formatted
// at New for every r up to 255 (and up to the burst), so a request of cost
// 0 into a full bucket of 100 or 255 allocates nothing, and into one of
// 256 formats its value once.
func TestCacheEdgeAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	r := httptest.NewRequest("GET", "/", nil)
	w := httptest.NewRecorder()
	for _, tc := range []struct {
		burst  int64
		allocs float64
	}{{100, 0}, {255, 0}, {256, 1}} {
		lim := mustNew(t, []Policy{{Name: "p", Cost: fixedCost(0), Client: Rate(1, time.Second, tc.burst)}},
			WithClock(func() int64 { return 0 }))
		lim.serve(w, r, &hold{})
		if a := testing.AllocsPerRun(100, func() { lim.serve(w, r, &hold{}) }); a != tc.allocs {
			t.Errorf("burst %d: %v allocations per decision, want %v", tc.burst, a, tc.allocs)
		}
		if got, want := w.Header().Get("RateLimit"), `"p";r=`+strconv.FormatInt(tc.burst, 10)+";t=0"; got != want {
			t.Errorf("burst %d: RateLimit %q, want %q", tc.burst, got, want)
		}
	}
}
