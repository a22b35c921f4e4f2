package stress

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/cellrate/cellrate/httplimit"
	"github.com/cellrate/cellrate/httplimit/clientkey"
)

// TestHTTPLimitFields parses httplimit's RateLimit-Policy and RateLimit
// fields with a structured-field parser (RFC 8941), over a real loopback
// server, on admitted and denied responses, with policy names that need
// escaping: RateLimit-Policy is a List of Items, each a String naming a
// limit with Integer q and w; RateLimit is one Item naming one of them
// with Integer r and t; a denial's Retry-After is t, at least 1.
func TestHTTPLimitFields(t *testing.T) {
	var now atomic.Int64
	lim, err := httplimit.New([]httplimit.Policy{{
		Name:   `api "v1" \ x`,
		Client: httplimit.Rate(1, time.Second, 3),
		Global: httplimit.Rate(5, time.Second, 4),
		Key: func(r *http.Request) (clientkey.Key, error) {
			return clientkey.String(r.Header.Get("User")), nil
		},
	}}, httplimit.WithClock(now.Load))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second); err != nil {
		ln.Close()
		t.Skipf("no loopback: %v", err) // a VM without lo up
	} else {
		c.Close()
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: lim.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))}}
	srv.Start()
	defer srv.Close()
	names := map[string]bool{}
	seen := map[string]int{} // "status limit" counts
	for i := range 40 {
		if i%10 == 9 {
			now.Add(int64(700 * time.Millisecond))
		}
		req, _ := http.NewRequest("GET", srv.URL, nil)
		req.Header.Set("User", strconv.Itoa(i%3))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()

		pol, err := httpsfv.UnmarshalList(res.Header.Values("RateLimit-Policy"))
		if err != nil || len(pol) != 2 {
			t.Fatalf("RateLimit-Policy %q: %v", res.Header.Values("RateLimit-Policy"), err)
		}
		for _, m := range pol {
			it, ok := m.(httpsfv.Item)
			name, isStr := it.Value.(string)
			if !ok || !isStr {
				t.Fatalf("RateLimit-Policy member %#v is not a String Item", m)
			}
			names[name] = true
			for _, k := range it.Params.Names() {
				v, _ := it.Params.Get(k)
				if n, isInt := v.(int64); (k != "q" && k != "w") || !isInt || n < 1 {
					t.Fatalf("RateLimit-Policy %s: parameter %s=%v", name, k, v)
				}
			}
		}
		item, err := httpsfv.UnmarshalItem(res.Header.Values("RateLimit"))
		if err != nil {
			t.Fatalf("RateLimit %q: %v", res.Header.Values("RateLimit"), err)
		}
		name, _ := item.Value.(string)
		if !names[name] {
			t.Fatalf("RateLimit names %q, not a policy of RateLimit-Policy %v", item.Value, names)
		}
		r, rok := item.Params.Get("r")
		reset, tok := item.Params.Get("t")
		if !rok || !tok || r.(int64) < 0 || reset.(int64) < 0 || len(item.Params.Names()) != 2 {
			t.Fatalf("RateLimit %q", res.Header.Get("RateLimit"))
		}
		if res.StatusCode == 429 {
			ra, err := strconv.ParseInt(res.Header.Get("Retry-After"), 10, 64)
			if err != nil || ra < 1 || ra != reset.(int64) || r.(int64) != 0 && name == `api "v1" \ x` {
				t.Fatalf("denial: Retry-After %q, RateLimit %q", res.Header.Get("Retry-After"), res.Header.Get("RateLimit"))
			}
		} else if res.StatusCode != 200 || res.Header.Get("Retry-After") != "" {
			t.Fatalf("status %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
		}
		seen[strconv.Itoa(res.StatusCode)+" "+name]++
	}
	// Both limits were reported, on admissions and on denials.
	for _, k := range []string{`200 api "v1" \ x`, `429 api "v1" \ x-global`, `429 api "v1" \ x`} {
		if seen[k] == 0 {
			t.Fatalf("no %q response: %v", k, seen)
		}
	}
}
