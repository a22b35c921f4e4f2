package bench

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/httprate"
	sethvargohttp "github.com/sethvargo/go-limiter/httplimit"
	"github.com/sethvargo/go-limiter/memorystore"
	vegeta "github.com/tsenart/vegeta/v12/lib"
	ulule "github.com/ulule/limiter/v3"
	ululestd "github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	ululemem "github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/cellrate/cellrate/httplimit"
	"github.com/cellrate/cellrate/httplimit/clientkey"
	"github.com/cellrate/cellrate/keyed"
)

// HTTPImpl is an HTTP rate-limiting middleware given the keyed limit
// (KeyedEvents per KeyedPeriod, bursts of KeyedEvents, a window of
// KeyedPeriod for window counters), naming clients by the address a
// trusted loopback proxy puts in X-Forwarded-For, each in the library's
// own way.
type HTTPImpl struct {
	Name string
	// New returns the middleware, sized for clients where the library
	// takes a size.
	New func(clients int) (func(http.Handler) http.Handler, error)
}

// HTTPImpls returns no middleware at all (the floor every added latency
// is measured from), cellrate's httplimit and the peers.
func HTTPImpls() []HTTPImpl {
	return []HTTPImpl{
		{"none", func(int) (func(http.Handler) http.Handler, error) {
			return func(h http.Handler) http.Handler { return h }, nil
		}},
		{"httplimit", newHTTPLimit},
		{"httprate", func(int) (func(http.Handler) http.Handler, error) {
			// The last X-Forwarded-For address (the one a trusted proxy
			// appended), canonicalized as httprate's docs advise.
			key := func(r *http.Request) (string, error) {
				xff := r.Header.Get("X-Forwarded-For")
				if i := strings.LastIndexByte(xff, ','); i >= 0 {
					xff = xff[i+1:]
				}
				return httprate.CanonicalizeIP(strings.TrimSpace(xff)), nil
			}
			return httprate.LimitBy(KeyedEvents, KeyedPeriod, key), nil
		}},
		{"sethvargo", func(int) (func(http.Handler) http.Handler, error) {
			store, err := memorystore.New(&memorystore.Config{Tokens: KeyedEvents, Interval: KeyedPeriod})
			if err != nil {
				return nil, err
			}
			m, err := sethvargohttp.NewMiddleware(store, sethvargohttp.IPKeyFunc("X-Forwarded-For"))
			if err != nil {
				return nil, err
			}
			return m.Handle, nil
		}},
		{"ulule", func(int) (func(http.Handler) http.Handler, error) {
			l := ulule.New(ululemem.NewStore(), ulule.Rate{Period: KeyedPeriod, Limit: KeyedEvents}, ulule.WithTrustForwardHeader(true))
			return ululestd.NewMiddleware(l).Handler, nil
		}},
		{"holdup", func(int) (func(http.Handler) http.Handler, error) {
			h := &holdUp{buckets: map[string]*holdUpBucket{}}
			return h.middleware, nil
		}},
	}
}

// HTTPLimitBare is httplimit doing what HoldUp does: the raw
// X-Forwarded-For value as the key (no address parsing) and no fields on
// admitted responses.
var HTTPLimitBare = HTTPImpl{"httplimit-bare", func(clients int) (func(http.Handler) http.Handler, error) {
	l, err := httplimit.New([]httplimit.Policy{{
		Name:   "perip",
		Client: httplimit.Rate(KeyedEvents, KeyedPeriod, KeyedEvents, keyed.WithCapacity(max(KeyedCapacity(clients), 1024))),
		Key: func(r *http.Request) (clientkey.Key, error) {
			return clientkey.String(r.Header.Get("X-Forwarded-For")), nil
		},
	}}, httplimit.WithHeaders(false, false))
	if err != nil {
		return nil, err
	}
	return l.Wrap, nil
}}

func newHTTPLimit(clients int) (func(http.Handler) http.Handler, error) {
	return newHTTPLimitCap(max(KeyedCapacity(clients), 1024))
}

// newHTTPLimitCap is httplimit with a table of capacity clients.
func newHTTPLimitCap(capacity int) (func(http.Handler) http.Handler, error) {
	key, err := clientkey.Proxy("X-Forwarded-For", netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"))
	if err != nil {
		return nil, err
	}
	l, err := httplimit.New([]httplimit.Policy{{
		Name:   "perip",
		Client: httplimit.Rate(KeyedEvents, KeyedPeriod, KeyedEvents, keyed.WithCapacity(capacity)),
		Key:    key,
	}})
	if err != nil {
		return nil, err
	}
	return l.Wrap, nil
}

// middleware is seed 003's Middleware: the key (here X-Forwarded-For, as
// the peers read it), Allow, and 429 when denied.
func (h *holdUp) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-Forwarded-For")
		if key == "" {
			key, _, _ = net.SplitHostPort(r.RemoteAddr)
		}
		if !h.Allow(key) {
			http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// trivial is the handler behind every middleware.
var trivial = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(okBody) })

var okBody = []byte("ok")

// clientAddr returns the i-th client's address: 10.x.y.z.
func clientAddr(i int) string {
	return "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255)
}

// HTTPConfig sizes the HTTP runs.
type HTTPConfig struct {
	// Rate and Duration are the fixed-rate attack's; MaxDuration the
	// max-rate one's; Workers its concurrent requests.
	Rate        int
	Duration    time.Duration
	MaxDuration time.Duration
	Workers     int
	// Distinct is the client population of the "distinct" scenario, each
	// client decided on once before the attack; Memory the clients the
	// memory run drives through ServeHTTP.
	Distinct, Memory int
	// Rounds is how many times each attack runs.
	Rounds int
	// Scenarios are the ones to run ("hot10", "distinct"); none means
	// both.
	Scenarios []string
}

// HTTPQuick and HTTPFull are the report's sizes.
var (
	// The report runs hot10 only, for its admissions against the bound:
	// latency and throughput over loopback, in one process with the load
	// generator, cannot be paired; the in-process runs measure the cost.
	HTTPQuick = HTTPConfig{Rate: 2000, Duration: time.Second, Workers: 16, Distinct: 100_000, Memory: 100_000, Rounds: 1, Scenarios: []string{"hot10"}}
	HTTPFull  = HTTPConfig{Rate: 2000, Duration: 3 * time.Second, Workers: 16, Distinct: 100_000, Memory: 250_000, Rounds: 1, Scenarios: []string{"hot10"}}
)

// HTTPRow is one middleware in one scenario.
type HTTPRow struct {
	Scenario, Impl string
	// P50 and P99 are the fixed-rate attack's latency percentiles.
	P50, P99 time.Duration
	// MaxRate is the requests per second of the max-rate attack.
	MaxRate float64
	// Admitted and Sent count the fixed-rate attack's 200s and requests;
	// Bound is the most the limit allows over the attack's span
	// (burst + rate*span per client that asked), 0 where the clients ask
	// below their limit.
	Admitted, Sent, Bound int64
}

// HTTPMemory is the heap one middleware holds after Clients distinct
// clients, each decided on once.
type HTTPMemory struct {
	Impl    string
	Clients int
	Bytes   int64
}

// RunHTTP runs every middleware behind a real loopback server under
// vegeta: "hot10", 10 clients asking twice their rate between them; and
// "distinct", a uniform choice among cfg.Distinct clients. It runs
// cfg.Rounds rounds, each middleware once per round in a rotated order,
// and keeps each figure's median over the rounds (the admissions of the
// round that came closest to its bound).
func RunHTTP(cfg HTTPConfig) ([]HTTPRow, error) {
	impls := HTTPImpls()
	runs := map[[2]string][]HTTPRow{}
	scs := cfg.Scenarios
	if len(scs) == 0 {
		scs = []string{"hot10", "distinct"}
	}
	for round := range max(cfg.Rounds, 1) {
		for _, sc := range scs {
			for k := range impls {
				im := impls[(k+round)%len(impls)]
				row, err := runHTTP(cfg, sc, im)
				if err != nil {
					return nil, fmt.Errorf("%s/%s: %w", sc, im.Name, err)
				}
				runs[[2]string{sc, im.Name}] = append(runs[[2]string{sc, im.Name}], row)
			}
		}
	}
	var rows []HTTPRow
	for _, sc := range scs {
		for _, im := range impls {
			rows = append(rows, medianRow(runs[[2]string{sc, im.Name}]))
		}
	}
	return rows, nil
}

func medianRow(rs []HTTPRow) HTTPRow {
	med := func(f func(HTTPRow) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	out := rs[0]
	out.P50 = time.Duration(med(func(r HTTPRow) float64 { return float64(r.P50) }))
	out.P99 = time.Duration(med(func(r HTTPRow) float64 { return float64(r.P99) }))
	out.MaxRate = med(func(r HTTPRow) float64 { return r.MaxRate })
	for _, r := range rs[1:] {
		if r.Bound > 0 && float64(r.Admitted)/float64(r.Bound) > float64(out.Admitted)/float64(out.Bound) {
			out.Admitted, out.Sent, out.Bound = r.Admitted, r.Sent, r.Bound
		}
	}
	return out
}

func runHTTP(cfg HTTPConfig, sc string, im HTTPImpl) (HTTPRow, error) {
	clients := 10
	if sc == "distinct" {
		clients = cfg.Distinct
	}
	mw, err := im.New(clients)
	if err != nil {
		return HTTPRow{}, err
	}
	h := mw(trivial)
	if sc == "distinct" {
		prime(h, clients)
	}
	runtime.GC() // not during the attack: the garbage of priming, of the last run
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return HTTPRow{}, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/"

	var seq atomic.Uint64
	targeter := func(t *vegeta.Target) error {
		i := seq.Add(1)
		c := int(i % 10)
		if sc == "distinct" {
			c = int(rand.Uint64N(uint64(clients)))
		}
		t.Method, t.URL = "GET", url
		t.Header = http.Header{"X-Forwarded-For": {clientAddr(c)}}
		return nil
	}
	row := HTTPRow{Scenario: sc, Impl: im.Name}

	// Fixed rate: latency and admissions.
	at := vegeta.NewAttacker(vegeta.Workers(uint64(cfg.Workers)), vegeta.KeepAlive(true), vegeta.Timeout(10*time.Second))
	var m vegeta.Metrics
	start := time.Now()
	for res := range at.Attack(targeter, vegeta.Rate{Freq: cfg.Rate, Per: time.Second}, cfg.Duration, sc) {
		m.Add(res)
	}
	span := time.Since(start)
	m.Close()
	row.P50, row.P99 = m.Latencies.P50, m.Latencies.P99
	row.Sent, row.Admitted = int64(m.Requests), int64(m.StatusCodes["200"])
	if sc == "hot10" && im.Name != "none" {
		row.Bound = int64(clients) * (KeyedEvents + int64(float64(KeyedEvents)*span.Seconds()/KeyedPeriod.Seconds()))
	}
	if bad := int(m.Requests) - m.StatusCodes["200"] - m.StatusCodes["429"]; bad > 0 {
		return row, fmt.Errorf("%d requests neither 200 nor 429: %v %v", bad, m.StatusCodes, m.Errors)
	}

	// Max rate: as many requests as cfg.Workers can keep going.
	if cfg.MaxDuration <= 0 {
		return row, nil
	}
	at = vegeta.NewAttacker(vegeta.Workers(uint64(cfg.Workers)), vegeta.MaxWorkers(uint64(cfg.Workers)), vegeta.KeepAlive(true))
	var n int
	start = time.Now()
	for range at.Attack(targeter, vegeta.Rate{Freq: 0}, cfg.MaxDuration, sc+"-max") {
		n++
	}
	row.MaxRate = float64(n) / time.Since(start).Seconds()
	return row, nil
}

// prime decides on each of clients once, through ServeHTTP.
func prime(h http.Handler, clients int) {
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "127.0.0.1:1"
	var w nopWriter
	for i := range clients {
		r.Header = http.Header{"X-Forwarded-For": {clientAddr(i)}}
		w.h = nil
		h.ServeHTTP(&w, r)
	}
}

// nopWriter is a ResponseWriter that keeps nothing but its header map.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header {
	if w.h == nil {
		w.h = http.Header{}
	}
	return w.h
}
func (w *nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *nopWriter) WriteHeader(int)             {}

// MeasureHTTPMemory returns the live heap each middleware holds after
// clients distinct clients, each decided on once through ServeHTTP (the
// heap after a collection, less the heap before the middleware was made).
// httplimit-64k is httplimit with keyed's default table of 65536 clients,
// whose idle clients' slots are reused without loss.
func MeasureHTTPMemory(clients int) ([]HTTPMemory, error) {
	var out []HTTPMemory
	impls := append(HTTPImpls(), HTTPImpl{"httplimit-64k", func(int) (func(http.Handler) http.Handler, error) {
		return newHTTPLimitCap(1 << 16)
	}})
	for _, im := range impls {
		if im.Name == "none" {
			continue
		}
		before := heap()
		mw, err := im.New(clients)
		if err != nil {
			return nil, err
		}
		h := mw(trivial)
		prime(h, clients)
		after := heap()
		runtime.KeepAlive(h)
		out = append(out, HTTPMemory{Impl: im.Name, Clients: clients, Bytes: int64(after) - int64(before)})
	}
	return out, nil
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
