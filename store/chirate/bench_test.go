package chirate

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/go-chi/httprate"
)

func counters(b *testing.B) map[string]httprate.LimitCounter {
	c, err := New(Options{Capacity: 4096})
	if err != nil {
		b.Fatal(err)
	}
	return map[string]httprate.LimitCounter{"cellrate": c, "local": httprate.NewLocalLimitCounter(time.Minute)}
}

// BenchmarkDecision pairs this counter with httprate's own: what the
// middleware asks of a counter per request (Get, then IncrementBy), over
// 1,000 keys. Compare with benchstat -col /counter.
func BenchmarkDecision(b *testing.B) {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "client-" + strconv.Itoa(i)
	}
	for _, name := range []string{"cellrate", "local"} {
		b.Run("counter="+name, func(b *testing.B) {
			c := counters(b)[name]
			c.Config(1<<30, time.Minute)
			b.ReportAllocs()
			i := 0
			start := cpuNs()
			for b.Loop() {
				cur := time.Now().UTC().Truncate(time.Minute)
				k := keys[i%len(keys)]
				if _, _, err := c.Get(k, cur, cur.Add(-time.Minute)); err != nil {
					b.Fatal(err)
				}
				if err := c.IncrementBy(k, cur, 1); err != nil {
					b.Fatal(err)
				}
				i++
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkMiddleware is the same pair under httprate's middleware, in
// process, admitting.
func BenchmarkMiddleware(b *testing.B) {
	for _, name := range []string{"cellrate", "local"} {
		b.Run("counter="+name, func(b *testing.B) {
			var opts []httprate.Option
			if name == "cellrate" {
				opts = append(opts, httprate.WithLimitCounter(counters(b)[name]))
			}
			key := func(r *http.Request) (string, error) { return r.RemoteAddr, nil }
			h := httprate.LimitBy(100_000, time.Minute, key, opts...)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			reqs := make([]*http.Request, 1000)
			for i := range reqs {
				reqs[i] = httptest.NewRequest("GET", "/", nil)
				reqs[i].RemoteAddr = "10.0." + strconv.Itoa(i/250) + "." + strconv.Itoa(i%250) + ":1234"
			}
			w := httptest.NewRecorder()
			b.ReportAllocs()
			i := 0
			start := cpuNs()
			for b.Loop() {
				clear(w.Header())
				h.ServeHTTP(w, reqs[i%len(reqs)])
				i++
			}
			reportCPU(b, start)
		})
	}
}
