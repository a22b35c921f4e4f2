package httplimit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cellrate/cellrate/httplimit/clientkey"
	"github.com/cellrate/cellrate/keyed"
)

// do sends a request with the given method and headers over c.
func do(t *testing.T, c *http.Client, method, url string, hdr ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// TestHEADLimitedAsGET: a GET policy in front of a ServeMux pattern
// "GET /x" (which serves HEAD too) and in front of a plain handler (which
// serves any method, "get" too) runs the handler no more than the limit,
// whatever the mix of GET, HEAD and a lower-case get.
func TestHEADLimitedAsGET(t *testing.T) {
	var clk clock
	for _, viaMux := range []bool{true, false} {
		var runs atomic.Int64
		count := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { runs.Add(1) })
		lim := mustNew(t, []Policy{{Name: "get", Routes: []string{"GET /"}, Client: Rate(1, time.Hour, 2)}},
			WithClock(clk.now))
		var h http.Handler = count
		if viaMux {
			mux := http.NewServeMux()
			mux.Handle("GET /x", count)
			h = mux
		}
		url, c := startServer(t, "tcp4", lim.Wrap(h))
		methods := []string{"HEAD", "HEAD", "HEAD", "GET", "HEAD", "HEAD", "HEAD"}
		if !viaMux {
			methods = append(methods, "get", "get")
		}
		denied := 0
		for _, m := range methods {
			if do(t, c, m, url+"/x").StatusCode == 429 {
				denied++
			}
		}
		if runs.Load() != 2 || denied != len(methods)-2 {
			t.Fatalf("mux %v: the handler ran %d times, %d denied, against a limit of 2", viaMux, runs.Load(), denied)
		}
		// A POST is not the GET policy's.
		if res := do(t, c, "POST", url+"/y"); res.StatusCode == 429 || res.Header.Get("RateLimit") != "" {
			t.Fatalf("POST: %d %v", res.StatusCode, res.Header)
		}
	}
}

// TestKeyKinds: keys of different kinds whose bytes agree are different
// clients (the string "ABCD" and the address 65.66.67.68; the address
// and the same address joined with nothing else); IPv6 clients are their
// /64, alone and inside a joined key.
func TestKeyKinds(t *testing.T) {
	var clk clock
	keyOf := map[string]clientkey.Key{
		"s":     clientkey.String("ABCD"),
		"a":     clientkey.Addr(netip.MustParseAddr("65.66.67.68")),
		"m":     clientkey.Addr(netip.MustParseAddr("::ffff:65.66.67.68")),
		"j":     must(clientkey.Join(constKey(clientkey.Addr(netip.MustParseAddr("65.66.67.68"))))(nil)),
		"six1":  clientkey.Addr(netip.MustParseAddr("2001:db8::1")),
		"six2":  clientkey.Addr(netip.MustParseAddr("2001:db8::ffff:2")),
		"six3":  clientkey.Addr(netip.MustParseAddr("2001:db8:0:1::1")),
		"j6a":   joined(t, "2001:db8::1", "r"),
		"j6b":   joined(t, "2001:db8::2", "r"),
		"j6c":   joined(t, "2001:db8:0:1::1", "r"),
		"jrev":  must(clientkey.Join(constKey(clientkey.String("r")), constKey(clientkey.Addr(netip.MustParseAddr("2001:db8::1"))))(nil)),
		"plain": clientkey.String(`"r"`),
	}
	lim := mustNew(t, []Policy{{Name: "p", Client: Rate(1, time.Hour, 1),
		Key: func(r *http.Request) (clientkey.Key, error) { return keyOf[r.Header.Get("K")], nil }}}, WithClock(clk.now))
	url, c := startServer(t, "tcp4", lim.Wrap(okHandler))
	for _, tc := range []struct {
		k    string
		want int
	}{
		{"s", 200}, {"a", 200}, {"m", 429}, {"j", 200}, {"s", 429}, {"a", 429},
		{"six1", 200}, {"six2", 429}, {"six3", 200},
		{"j6a", 200}, {"j6b", 429}, {"j6c", 200}, {"jrev", 200}, {"plain", 200},
	} {
		if res := get(t, c, url, "K", tc.k); res.StatusCode != tc.want {
			t.Errorf("key %s (%v): %d, want %d", tc.k, keyOf[tc.k], res.StatusCode, tc.want)
		}
	}
	// With /48 clients, 2001:db8:0:1::/64 is 2001:db8::/64's client, alone
	// and joined.
	by48, err := clientkey.IPv6Prefix(48, func(r *http.Request) (clientkey.Key, error) { return keyOf[r.Header.Get("K")], nil })
	if err != nil {
		t.Fatal(err)
	}
	lim = mustNew(t, []Policy{{Name: "p", Client: Rate(1, time.Hour, 1), Key: by48}}, WithClock(clk.now))
	url, c = startServer(t, "tcp4", lim.Wrap(okHandler))
	for _, tc := range []struct {
		k    string
		want int
	}{{"six1", 200}, {"six3", 429}, {"j6a", 200}, {"j6c", 429}} {
		if res := get(t, c, url, "K", tc.k); res.StatusCode != tc.want {
			t.Errorf("/48: key %s (%v): %d, want %d", tc.k, keyOf[tc.k], res.StatusCode, tc.want)
		}
	}
}

func must(k clientkey.Key, err error) clientkey.Key {
	if err != nil {
		panic(err)
	}
	return k
}

func constKey(k clientkey.Key) clientkey.Func {
	return func(*http.Request) (clientkey.Key, error) { return k, nil }
}

func joined(t *testing.T, addr, s string) clientkey.Key {
	t.Helper()
	k, err := clientkey.Join(constKey(clientkey.Addr(netip.MustParseAddr(addr))), constKey(clientkey.String(s)))(nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestKeyErrors: a clientkey.Func's error reaches the error handler as it is and
// is counted; no key (clientkey.String("")) is clientkey.ErrNoKey, never a bucket shared
// by every keyless client; a full WithRefuse table answers 503.
func TestKeyErrors(t *testing.T) {
	var clk clock
	boom := errors.New("no api key header")
	var got []error
	pol := func(k clientkey.Func) []Policy {
		return []Policy{{Name: "p", Key: k, Client: Rate(1, time.Hour, 1)}}
	}
	lim := mustNew(t, pol(func(r *http.Request) (clientkey.Key, error) {
		if v := r.Header.Get("Api-Key"); v != "" {
			return clientkey.String(v), nil
		}
		return clientkey.Key{}, boom
	}), WithClock(clk.now), WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) bool {
		got = append(got, err)
		w.WriteHeader(401)
		return false
	}))
	url, c := startServer(t, "tcp4", lim.Wrap(okHandler))
	for range 3 {
		if res := get(t, c, url); res.StatusCode != 401 {
			t.Fatalf("no key: %d", res.StatusCode)
		}
	}
	if len(got) != 3 || got[0] != boom || lim.Stats()["p"].Errors != 3 || lim.Stats()["p"].Admitted != 0 {
		t.Fatalf("handler got %v, stats %+v", got, lim.Stats()["p"])
	}

	// clientkey.String("") by default: 400 each time, none admitted, counted.
	lim = mustNew(t, pol(func(r *http.Request) (clientkey.Key, error) { return clientkey.String(r.Header.Get("Api-Key")), nil }), WithClock(clk.now))
	url, c = startServer(t, "tcp4", lim.Wrap(okHandler))
	for range 3 {
		if res := get(t, c, url); res.StatusCode != 400 {
			t.Fatalf("empty key: %d", res.StatusCode)
		}
	}
	if res := get(t, c, url, "Api-Key", "k"); res.StatusCode != 200 {
		t.Fatalf("keyed: %d", res.StatusCode)
	}
	if st := lim.Stats()["p"]; st.Errors != 3 || st.Admitted != 1 {
		t.Fatalf("stats %+v", st)
	}

	// A full table under keyed.WithRefuse: a new client is answered 503 and
	// counted, never admitted past the table.
	lim = mustNew(t, []Policy{{Name: "p", Key: clientkey.Header("Api-Key"), Client: Rate(1, time.Hour, 2, keyed.WithCapacity(8), keyed.WithRefuse())}}, WithClock(clk.now))
	url, c = startServer(t, "tcp4", lim.Wrap(okHandler))
	full := 0
	for i := range 40 {
		switch res := get(t, c, url, "Api-Key", strconv.Itoa(i)); res.StatusCode {
		case 503:
			full++
		case 200:
		default:
			t.Fatalf("client %d: %d", i, res.StatusCode)
		}
	}
	if st := lim.Stats()["p"]; full < 32 || st.Errors != int64(full) || st.Admitted != int64(40-full) {
		t.Fatalf("%d refused by a full table of 8, stats %+v", full, st)
	}
}

// TestZeroLimiter: a Limiter not made by New (the zero value, a nil
// pointer) runs no handler: every request is answered 500.
func TestZeroLimiter(t *testing.T) {
	var runs atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { runs.Add(1) })
	var zero Limiter
	var nilLim *Limiter
	for _, l := range []*Limiter{&zero, nilLim} {
		url, c := startServer(t, "tcp4", l.Wrap(h))
		for range 3 {
			if res := get(t, c, url); res.StatusCode != 500 {
				t.Fatalf("zero Limiter: %d", res.StatusCode)
			}
		}
		if l.Stats() != nil {
			t.Fatal("the zero Limiter has Stats")
		}
	}
	if runs.Load() != 0 {
		t.Fatalf("the handler ran %d times behind a zero Limiter", runs.Load())
	}
}

// TestPathPrefixSegment: a prefix without a trailing slash is that path
// and its subtree, never a longer segment ("/api" is not "/apiary"); one
// with a trailing slash is the subtree only.
func TestPathPrefixSegment(t *testing.T) {
	var clk clock
	lim := mustNew(t, []Policy{
		{Name: "api", Routes: []string{"/api"}, Client: Rate(1, time.Hour, 1)},
		{Name: "docs", Routes: []string{"/docs/"}, Client: Rate(1, time.Hour, 1)},
	}, WithClock(clk.now))
	url, c := startServer(t, "tcp4", lim.Wrap(okHandler))
	for _, tc := range []struct {
		path, policy string
		status       int
	}{
		{"/apiary", "", 200}, {"/apiary", "", 200}, {"/api", "api", 200}, {"/api/x", "api", 429}, {"/api", "api", 429},
		{"/apix/y", "", 200}, {"/docs", "", 200}, {"/docsy", "", 200}, {"/docs/a", "docs", 200}, {"/docs/", "docs", 429},
	} {
		res := get(t, c, url+tc.path)
		name := ""
		if v := res.Header.Get("RateLimit"); v != "" {
			name, _, _ = rateLimitField(t, v)
		}
		if res.StatusCode != tc.status || name != tc.policy {
			t.Errorf("%s: %d by %q, want %d by %q", tc.path, res.StatusCode, name, tc.status, tc.policy)
		}
	}
}

// TestFirstPolicyApplies: of several policies that match a request, the
// first in order applies, alone; a request no policy matches passes
// unlimited with no fields.
func TestFirstPolicyApplies(t *testing.T) {
	var clk clock
	lim := mustNew(t, []Policy{
		{Name: "login", Routes: []string{"POST /login"}, Client: Rate(1, time.Hour, 1)},
		{Name: "all", Routes: []string{"/"}, Client: Rate(1, time.Hour, 3)},
		{Name: "never", Routes: []string{"/login"}, Client: Rate(1, time.Hour, 100)},
	}, WithClock(clk.now))
	h := lim.Wrap(okHandler)
	for i, tc := range []struct {
		method, path, policy string
		status               int
	}{
		{"POST", "/login", "login", 200}, {"POST", "/login", "login", 429},
		{"GET", "/login", "all", 200}, {"GET", "/x", "all", 200}, {"GET", "/login", "all", 200}, {"GET", "/y", "all", 429},
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(tc.method, tc.path, nil)
		h.ServeHTTP(w, r)
		name := ""
		if v := w.Header().Get("RateLimit"); v != "" {
			name, _, _ = rateLimitField(t, v)
		}
		if w.Code != tc.status || name != tc.policy {
			t.Errorf("request %d, %s %s: %d by %q, want %d by %q", i, tc.method, tc.path, w.Code, name, tc.status, tc.policy)
		}
	}
	if st := lim.Stats(); st["never"].Admitted+st["never"].Denied != 0 || st["all"].Admitted != 3 || st["login"].Denied != 1 {
		t.Fatalf("stats %+v", st)
	}
	lim = mustNew(t, []Policy{{Name: "api", Routes: []string{"/api/"}, Client: Rate(1, time.Hour, 1)}}, WithClock(clk.now))
	for range 3 {
		w := httptest.NewRecorder()
		lim.Wrap(okHandler).ServeHTTP(w, httptest.NewRequest("GET", "/other", nil))
		if w.Code != 200 || w.Header().Get("RateLimit") != "" || w.Header().Get("RateLimit-Policy") != "" {
			t.Fatalf("unmatched: %d %v", w.Code, w.Header())
		}
	}
}

// rawRequest sends the request line line (method and target, as written)
// over a new connection to the server at url and returns the status and
// body.
func rawRequest(t *testing.T, url, line string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "%s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", line)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestPathForms: a path with empty, "." or ".." segments reaches no more
// of a limited subtree than its limit, whether the handler serves the
// path cleaned (http.FileServer, alone or behind a ServeMux, which
// cleans nothing for CONNECT) or as sent (a router that does not clean);
// a path whose two forms fall under two policies is refused (400) and
// counted as an error, and a clean one is served as before.
func TestPathForms(t *testing.T) {
	files := fstest.MapFS{"private/secret": {Data: []byte("SECRET")}, "public/x": {Data: []byte("x")}}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServerFS(files))
	asSent := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/private/") {
			io.WriteString(w, "SECRET")
		}
	})
	hostile := []string{
		"GET /x/../private/secret", "GET //private/secret", "GET /private/./secret", "GET /private//secret",
		"CONNECT /x/../private/secret", "CONNECT //private/secret", "POST /%2e%2e/private/secret",
		"GET /public/../private/secret", "CONNECT /public/../private/secret", "GET /private/../public/x",
		"GET //private/", "GET /private/secret",
	}
	for name, h := range map[string]http.Handler{"FileServer": http.FileServerFS(files), "ServeMux": mux, "as sent": asSent} {
		var clk clock
		lim := mustNew(t, []Policy{
			{Name: "private", Routes: []string{"/private/"}, Client: Rate(1, time.Hour, 1)},
			{Name: "public", Routes: []string{"/public/"}, Client: Rate(1, time.Hour, 100)},
		}, WithClock(clk.now))
		url, _ := startServer(t, "tcp4", lim.Wrap(h))
		if code, body := rawRequest(t, url, "GET /private/secret"); code != 200 || body != "SECRET" {
			t.Fatalf("%s: a first clean request: %d %q", name, code, body)
		}
		for _, line := range hostile {
			if code, body := rawRequest(t, url, line); strings.Contains(strings.ToLower(body), "secret") {
				t.Errorf("%s: %s: %d, served past the limit", name, line, code)
			}
		}
		if code, _ := rawRequest(t, url, "GET /public/../private/secret"); code != 400 {
			t.Errorf("%s: a path under two policies: %d, want 400", name, code)
		}
		if st := lim.Stats(); st["public"].Errors != 3 || st["private"].Errors != 1 {
			t.Errorf("%s: paths under two policies counted %+v, want 3 and 1 errors by their policy as sent", name, st)
		}
		if code, _ := rawRequest(t, url, "GET /public/x"); code != 200 {
			t.Errorf("%s: a clean public path: %d", name, code)
		}
	}
}

// TestCleanPath: a path is cleaned as ServeMux cleans it, keeping a
// trailing slash but never adding one ("/x/../private" is "/private",
// which ServeMux redirects, not "/private/", which it serves); the empty
// path (an absolute-form request line with no path) and one not rooted
// ("*") are left as they are.
func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{
		"":                "",
		"*":               "*",
		"/private/secret": "/private/secret",
		"/x/../private":   "/private",
		"/x/../private/":  "/private/",
		"//private//a":    "/private/a",
		"/./":             "/",
		"//":              "/",
		"/a/./b/../":      "/a/",
	} {
		if got := cleanPath(in); got != want {
			t.Errorf("cleanPath(%q) = %q, want %q", in, got, want)
		}
	}
}
