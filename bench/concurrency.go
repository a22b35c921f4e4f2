package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ConcBed is the adaptive concurrency test bed: an HTTP server on
// 127.0.0.1 whose handler queues each request for one of Workers workers,
// each taking Service per request, so latency grows with the requests in
// flight past Workers (the optimum concurrency). A limiter guards the
// handler (acquire before queueing, 503 at once when refused, release when
// the work is done); a load generator sends requests open-loop at each of
// Loads times the capacity (Workers/Service per second) for Run each.
type ConcBed struct {
	Workers int
	Service time.Duration
	Loads   []float64
	Run     time.Duration
	// Initial is every limiter's starting limit.
	Initial int
	// Sample is how often the limit and the in-flight count are read.
	Sample time.Duration
	// Rounds runs every limiter at every load this many times (at least
	// once), all of them in each round, and reports each column's median
	// over the rounds: a stall of the host lands in one round's row.
	Rounds int
}

// ConcRow is one limiter at one load.
type ConcRow struct {
	Limiter string
	Load    float64
	Workers int
	// Converge is the time from the start to the first reading of the
	// limit within ±10% of Workers; Converged is false when none was.
	Converge  time.Duration
	Converged bool
	// InFlight is the mean in-flight count at the server, and Limit the
	// median limit, over the run's second half (steady state).
	InFlight, Limit float64
	// Spread is half the 5th-95th percentile range of the limit over the
	// second half, as a fraction of its median.
	Spread float64
	// P50, P99 are client latencies of admitted requests in the second
	// half, NoLoad the median latency of single requests on an idle bed.
	P50, P99, NoLoad time.Duration
	// SrvP99 is the 99th percentile of the same requests' time in the
	// server from admission to the end of their work (the queue the limit
	// controls, without the HTTP stack), SrvNoLoad its no-load value.
	SrvP99, SrvNoLoad time.Duration
	// Goodput is the requests served in the second half per second, as a
	// fraction of the capacity; Refused is the fraction of requests sent
	// in the second half that were refused.
	Goodput, Refused float64
}

// concGuard is one limiter under test, seen by the bed's middleware.
type concGuard interface {
	acquire() (release func(drop bool), ok bool)
	limit() int
}

// ConcImpl names a limiter and makes a fresh one for a bed whose no-load
// latency is noLoad.
type ConcImpl struct {
	Name string
	New  func(bed ConcBed, noLoad time.Duration) (concGuard, error)
}

// concServer is the bed's server: the queue, its workers and the guard.
type concServer struct {
	jobs     chan chan struct{}
	inflight atomic.Int64
	guard    atomic.Pointer[concGuardBox]
	deadline time.Duration
	service  time.Duration
	start    time.Time
	mu       sync.Mutex
	lats     []concResult // admitted requests' time in the server
	stop     chan struct{}
	wg       sync.WaitGroup
}

type concGuardBox struct{ g concGuard }

func newConcServer(workers int, service time.Duration) *concServer {
	s := &concServer{jobs: make(chan chan struct{}, 1<<16), service: service, stop: make(chan struct{})}
	for range workers {
		s.wg.Add(1)
		go s.work()
	}
	return s
}

func (s *concServer) work() {
	defer s.wg.Done()
	for {
		select {
		case done := <-s.jobs:
			time.Sleep(s.service)
			close(done)
		case <-s.stop:
			return
		}
	}
}

func (s *concServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var release func(bool)
	if b := s.guard.Load(); b != nil {
		rel, ok := b.g.acquire()
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		release = rel
	}
	s.inflight.Add(1)
	start := time.Now()
	done := make(chan struct{})
	s.jobs <- done
	<-done
	s.inflight.Add(-1)
	d := time.Since(start)
	if release != nil {
		release(s.deadline > 0 && d > s.deadline)
	}
	s.mu.Lock()
	s.lats = append(s.lats, concResult{at: start.Sub(s.start), lat: d, code: http.StatusOK})
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (s *concServer) close() {
	close(s.stop)
	s.wg.Wait()
}

// RunConcBed runs every impl at every load on one server and returns the
// rows, impls outer, loads inner.
func RunConcBed(bed ConcBed, impls []ConcImpl) ([]ConcRow, error) {
	srv := newConcServer(bed.Workers, bed.Service)
	defer srv.close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: srv}
	go hs.Serve(ln)
	defer hs.Close()
	url := "http://" + ln.Addr().String() + "/"
	tr := &http.Transport{MaxIdleConnsPerHost: 4096, MaxIdleConns: 4096}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	noLoad, err := measureNoLoad(cl, url)
	if err != nil {
		return nil, err
	}
	srv.mu.Lock()
	srvNoLoad := time.Duration(pctDur(srv.lats, 0.5))
	srv.mu.Unlock()
	srv.deadline = 2 * noLoad // a request slower than this is a timeout: Dropped
	rounds := make([][]ConcRow, max(1, bed.Rounds))
	for i := range rounds {
		for _, im := range impls {
			for _, load := range bed.Loads {
				g, err := im.New(bed, noLoad)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", im.Name, err)
				}
				srv.guard.Store(&concGuardBox{g})
				r, err := runConcLoad(bed, srv, cl, url, load, g)
				srv.guard.Store(nil)
				if err != nil {
					return nil, fmt.Errorf("%s at %.1fx: %w", im.Name, load, err)
				}
				r.Limiter, r.NoLoad, r.SrvNoLoad = im.Name, noLoad, srvNoLoad
				rounds[i] = append(rounds[i], r)
				drain(srv)
			}
		}
	}
	return medianRows(rounds), nil
}

// medianRows returns, for each row position, the row whose every figure
// is the median of that figure over the rounds (the mean of the middle
// two for an even count; Converged: at least half).
func medianRows(rounds [][]ConcRow) []ConcRow {
	out := slices.Clone(rounds[0])
	med := func(i int, f func(ConcRow) float64) float64 {
		xs := make([]float64, len(rounds))
		for k, rs := range rounds {
			xs[k] = f(rs[i])
		}
		slices.Sort(xs)
		n := len(xs)
		return (xs[(n-1)/2] + xs[n/2]) / 2
	}
	dur := func(i int, f func(ConcRow) time.Duration) time.Duration {
		return time.Duration(med(i, func(r ConcRow) float64 { return float64(f(r)) }))
	}
	for i := range out {
		r := &out[i]
		r.Converge = dur(i, func(r ConcRow) time.Duration { return r.Converge })
		r.Converged = med(i, func(r ConcRow) float64 { return b2f(r.Converged) }) >= 0.5
		r.InFlight = med(i, func(r ConcRow) float64 { return r.InFlight })
		r.Limit = med(i, func(r ConcRow) float64 { return r.Limit })
		r.Spread = med(i, func(r ConcRow) float64 { return r.Spread })
		r.P50 = dur(i, func(r ConcRow) time.Duration { return r.P50 })
		r.P99 = dur(i, func(r ConcRow) time.Duration { return r.P99 })
		r.SrvP99 = dur(i, func(r ConcRow) time.Duration { return r.SrvP99 })
		r.Goodput = med(i, func(r ConcRow) float64 { return r.Goodput })
		r.Refused = med(i, func(r ConcRow) float64 { return r.Refused })
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// drain waits (at most 10s) for the server's queue to empty between runs.
func drain(srv *concServer) {
	for i := 0; i < 10000 && srv.inflight.Load() > 0; i++ {
		time.Sleep(time.Millisecond)
	}
}

func get(cl *http.Client, url string) (int, error) {
	resp, err := cl.Get(url)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// measureNoLoad returns the median latency of 21 requests sent one at a
// time to the bed with no limiter.
func measureNoLoad(cl *http.Client, url string) (time.Duration, error) {
	var ds []time.Duration
	for range 21 {
		t := time.Now()
		if _, err := get(cl, url); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(t))
	}
	slices.Sort(ds)
	return ds[len(ds)/2], nil
}

type concSample struct {
	at       time.Duration
	limit    int
	inflight int64
}

type concResult struct {
	at   time.Duration
	lat  time.Duration
	code int
}

// runConcLoad drives one limiter at load times the capacity for bed.Run.
func runConcLoad(bed ConcBed, srv *concServer, cl *http.Client, url string, load float64, g concGuard) (ConcRow, error) {
	rate := load * float64(bed.Workers) / bed.Service.Seconds()
	interval := time.Duration(float64(time.Second) / rate)
	total := int(bed.Run / interval)
	results := make([]concResult, total)
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	srv.mu.Lock()
	srv.start, srv.lats = start, srv.lats[:0]
	srv.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	samples := make(chan []concSample, 1)
	go sampleConc(ctx, bed.Sample, start, srv, g, samples)
	for i := range total {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			t := time.Now()
			code, err := get(cl, url)
			if err != nil {
				failed.Add(1)
			}
			results[i] = concResult{at: t.Sub(start), lat: time.Since(t), code: code}
		}(i)
	}
	wg.Wait()
	cancel()
	ss := <-samples
	if n := failed.Load(); n > 0 {
		return ConcRow{}, fmt.Errorf("%d requests failed", n)
	}
	row := summarize(bed, load, results, ss)
	srv.mu.Lock()
	var tail []concResult
	for _, r := range srv.lats {
		if r.at >= bed.Run/2 {
			tail = append(tail, r)
		}
	}
	srv.mu.Unlock()
	row.SrvP99 = time.Duration(pctDur(tail, 0.99))
	return row, nil
}

func sampleConc(ctx context.Context, every time.Duration, start time.Time, srv *concServer, g concGuard, out chan<- []concSample) {
	var ss []concSample
	tk := time.NewTicker(every)
	defer tk.Stop()
	for {
		select {
		case <-tk.C:
			ss = append(ss, concSample{at: time.Since(start), limit: g.limit(), inflight: srv.inflight.Load()})
		case <-ctx.Done():
			out <- ss
			return
		}
	}
}

func summarize(bed ConcBed, load float64, rs []concResult, ss []concSample) ConcRow {
	row := ConcRow{Load: load, Workers: bed.Workers, Converge: bed.Run}
	summarizeLimit(&row, bed.Run/2, ss)
	summarizeLatency(&row, bed, rs)
	return row
}

// summarizeLimit fills the convergence time, and the in-flight count, the
// limit and its spread over the samples from half on.
func summarizeLimit(row *ConcRow, half time.Duration, ss []concSample) {
	w := float64(row.Workers)
	for _, s := range ss {
		if l := float64(s.limit); l >= 0.9*w && l <= 1.1*w {
			row.Converge, row.Converged = s.at, true
			break
		}
	}
	var lims []float64
	var inSum float64
	for _, s := range ss {
		if s.at >= half {
			lims = append(lims, float64(s.limit))
			inSum += float64(s.inflight)
		}
	}
	if len(lims) == 0 {
		return
	}
	row.InFlight = inSum / float64(len(lims))
	slices.Sort(lims)
	row.Limit = pct(lims, 0.5)
	if row.Limit > 0 {
		row.Spread = (pct(lims, 0.95) - pct(lims, 0.05)) / 2 / row.Limit
	}
}

// summarizeLatency fills the client latencies, goodput and refusals of
// the requests sent from half the run on.
func summarizeLatency(row *ConcRow, bed ConcBed, rs []concResult) {
	half := bed.Run / 2
	var lats []float64
	sent, refused := 0, 0
	for _, r := range rs {
		if r.at < half {
			continue
		}
		sent++
		if r.code == http.StatusOK {
			lats = append(lats, float64(r.lat))
		} else {
			refused++
		}
	}
	if len(lats) > 0 {
		slices.Sort(lats)
		row.P50, row.P99 = time.Duration(pct(lats, 0.5)), time.Duration(pct(lats, 0.99))
	}
	capacity := float64(bed.Workers) / bed.Service.Seconds()
	row.Goodput = float64(len(lats)) / (bed.Run - half).Seconds() / capacity
	if sent > 0 {
		row.Refused = float64(refused) / float64(sent)
	}
}

// pctDur is the p-quantile of rs' latencies (0 for none).
func pctDur(rs []concResult, p float64) float64 {
	if len(rs) == 0 {
		return 0
	}
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = float64(r.lat)
	}
	slices.Sort(xs)
	return pct(xs, p)
}

// pct is the p-quantile of sorted xs, nearest rank.
func pct(xs []float64, p float64) float64 {
	i := int(math.Ceil(p*float64(len(xs)))) - 1
	return xs[min(len(xs)-1, max(0, i))]
}

var errNoRows = errors.New("bench: no rows")

// FormatConcRows writes rows as a Markdown table.
func FormatConcRows(rows []ConcRow) (string, error) {
	if len(rows) == 0 {
		return "", errNoRows
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Bed: %d workers, no-load latency %v (client, loopback); loads are multiples of the capacity. "+
		"Converge: first reading of the limit within ±10%% of the workers; in flight, limit, spread (half the 5th-95th percentile range over the median), "+
		"latencies and goodput (served per second over the capacity) over each run's second half.\n\n", rows[0].Workers, rows[0].NoLoad.Round(10*time.Microsecond))
	b.WriteString("| limiter | load | converge | in flight / workers | limit (median) | spread | p50 / no-load | p99 / no-load | server p99 / no-load | goodput | refused |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		conv := r.Converge.Round(10 * time.Millisecond).String()
		if !r.Converged {
			conv = "never"
		}
		nl := float64(r.NoLoad)
		fmt.Fprintf(&b, "| %s | %.1fx | %s | %.2f | %.1f | ±%.0f%% | %.2f | %.2f | %.2f | %.2f | %.0f%% |\n",
			r.Limiter, r.Load, conv, r.InFlight/float64(r.Workers), r.Limit, 100*r.Spread,
			float64(r.P50)/nl, float64(r.P99)/nl, float64(r.SrvP99)/float64(r.SrvNoLoad), r.Goodput, 100*r.Refused)
	}
	return b.String(), nil
}
