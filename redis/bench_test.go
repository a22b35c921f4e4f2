package redis

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// The comparison with go-redis/redis_rate v10 (its Lua GCRA, one EVALSHA
// per decision, floating point) on the same server. Run with
//
//	go test -run '^$' -bench . -count 6 ./   (in redis/)
//	CELLRATE_REDIS_REPORT=1 go test -run TestReport -v ./
var (
	benchOnce   sync.Once
	benchServer *redistest.Server
)

func benchClient(b *testing.B) *goredis.Client {
	benchOnce.Do(func() { benchServer = redistest.Start(&keepTB{b}) })
	c := goredis.NewClient(&goredis.Options{Addr: benchServer.Addr})
	b.Cleanup(func() { c.Close() })
	return c
}

// keepTB lets the benchmarks share one server for the whole run (it is
// killed with the test binary's process group... and by TestMain below).
type keepTB struct{ testing.TB }

func (k *keepTB) Cleanup(f func()) { benchCleanups = append(benchCleanups, f) }

var benchCleanups []func()

// benchRate and benchBurst are the admitting benchmarks' limit: 1000/s with
// a burst no run exhausts (2^27). Each decision moves the key's state 1ms
// ahead, faster than it refills, so the key stays in Redis for the whole
// run, as a busy user's would, for both libraries. (A rate of 1e8/s refilled
// the key within 10ns of each decision: every call found it expired, so
// Redis deleted and recreated it every time.)
const (
	benchRate  = 1000
	benchBurst = 1 << 27
)

type decider func(ctx context.Context, key string) (bool, error)

func deciders(tb testing.TB, c *goredis.Client, rate int, burst int64) map[string]decider {
	g, err := NewGCRA(c, "bg:", int64(rate), time.Second, burst)
	if err != nil {
		tb.Fatal(err)
	}
	w, err := NewWindow(c, "bw:", int64(rate), time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	rr := redis_rate.NewLimiter(c)
	lim := redis_rate.Limit{Rate: rate, Burst: int(burst), Period: time.Second}
	return map[string]decider{
		"cellrate-gcra":   g.Allow,
		"cellrate-window": w.Allow,
		"redis_rate": func(ctx context.Context, key string) (bool, error) {
			r, err := rr.Allow(ctx, "rr:"+key, lim)
			return err == nil && r.Allowed > 0, err
		},
	}
}

var benchNames = []string{"cellrate-gcra", "cellrate-window", "redis_rate"}

// BenchmarkDecision: one goroutine, admitting (a rate no run reaches) and
// denying (1 per hour).
func BenchmarkDecision(b *testing.B) {
	c := benchClient(b)
	for _, mode := range []struct {
		name  string
		rate  int
		burst int64
	}{{"admitting", benchRate, benchBurst}, {"denying", 1, 1}} {
		ds := deciders(b, c, mode.rate, mode.burst)
		for _, name := range benchNames {
			d := ds[name]
			b.Run(mode.name+"/"+name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := d(bg, "k"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkParallel: many goroutines, one key per goroutine (per user).
func BenchmarkParallel(b *testing.B) {
	c := benchClient(b)
	ds := deciders(b, c, benchRate, benchBurst)
	for _, name := range benchNames {
		d := ds[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(32)
			var id atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				key := "u" + strconv.FormatInt(id.Add(1), 10)
				for pb.Next() {
					if _, err := d(bg, key); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkTwoTier: 32 goroutines per core, seed 004's parameters (burst
// 1000, 500/s, batch 100), on one hot key and on a key per goroutine; the
// round trips per decision are reported.
func BenchmarkTwoTier(b *testing.B) {
	c := benchClient(b)
	for _, hot := range []bool{true, false} {
		name := "per_user"
		if hot {
			name = "hot_key"
		}
		b.Run(name, func(b *testing.B) {
			tt, err := NewTwoTier(c, "btt:"+name+strconv.Itoa(b.N), 500, time.Second, 1000, WithBatch(100), WithTimeout(5*time.Second))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetParallelism(32)
			var id atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				key := "hot"
				if !hot {
					key = "u" + strconv.FormatInt(id.Add(1), 10)
				}
				for pb.Next() {
					if _, err := tt.Allow(bg, key); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(tt.Stats().RoundTrips)/float64(b.N), "trips/op")
		})
	}
}

// TestReport measures, for each limiter on one fresh server: allocations
// per decision, decisions/s of one goroutine, round trips per decision and
// the server's CPU per decision from INFO (interleaved: 20 rounds of 500
// decisions each, so the machine's load falls on all alike), and the
// admitted count against the exact bound burst + rate*T when 8 goroutines
// each ask every limiter in turn, far past the rate, for 2s.
func TestReport(t *testing.T) {
	if os.Getenv("CELLRATE_REDIS_REPORT") == "" {
		t.Skip("set CELLRATE_REDIS_REPORT=1")
	}
	s, c := server(t)
	const rate, burst = 1000, 100
	ds := deciders(t, c, rate, burst)
	allocs := map[string]float64{}
	for _, name := range benchNames {
		d := ds[name]
		allocs[name] = testing.AllocsPerRun(2000, func() { d(bg, "alloc") })
	}
	el := map[string]time.Duration{}
	cpu := map[string]time.Duration{}
	calls := map[string]int64{}
	const rounds, per = 20, 500
	for range rounds {
		for _, name := range benchNames {
			d := ds[name]
			s.Do("CONFIG", "RESETSTAT")
			cpu0 := serverCPU(t, s)
			start := time.Now()
			for range per {
				d(bg, "seq")
			}
			el[name] += time.Since(start)
			cpu[name] += serverCPU(t, s) - cpu0
			calls[name] += commandCalls(t, s)
		}
	}
	admitted := map[string]*atomic.Int64{}
	for _, name := range benchNames {
		admitted[name] = new(atomic.Int64)
	}
	var failed atomic.Int64
	var wg sync.WaitGroup
	begin := time.Now()
	stop := begin.Add(2 * time.Second)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				for _, name := range benchNames {
					ok, err := ds[name](bg, "acc")
					if ok {
						admitted[name].Add(1)
					}
					if err != nil {
						failed.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	span := time.Since(begin).Seconds()
	if failed.Load() != 0 {
		t.Fatalf("%d errors", failed.Load())
	}
	for _, name := range benchNames {
		n := float64(rounds * per)
		bound := burst + rate*span
		if name == "cellrate-window" {
			bound = rate * (span + 1) // at most limit*(ceil(T/W)+1)
		}
		t.Logf("%-16s %5.1f allocs/decision, %6.0f decisions/s (1 goroutine), %.2f round trips/decision, %5.2f us server CPU/decision; admitted %d of the bound %.0f (%.3f)",
			name, allocs[name], n/el[name].Seconds(), float64(calls[name])/n,
			float64(cpu[name].Microseconds())/n, admitted[name].Load(), bound, float64(admitted[name].Load())/bound)
	}
}

// serverStat is a counter of INFO stats.
func serverStat(t testing.TB, s *redistest.Server, name string) int64 {
	info, err := s.Do("INFO", "stats")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == name {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatalf("no %s in INFO stats", name)
	return 0
}

// processSyscalls is this process's read and write system calls so far
// (syscr + syscw of /proc/self/io), -1 where there is no such file.
func processSyscalls() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	var n int64
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && (k == "syscr" || k == "syscw") {
			x, _ := strconv.ParseInt(v, 10, 64)
			n += x
		}
	}
	return n
}

func serverCPU(t testing.TB, s *redistest.Server) time.Duration {
	info, err := s.Do("INFO", "cpu")
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return time.Duration(total * 1e9)
}

// commandCalls sums the calls of the commands a client sends (EVALSHA,
// EVAL) since RESETSTAT: the round trips. (INFO's counts also hold the
// commands scripts call.)
func commandCalls(t *testing.T, s *redistest.Server) int64 {
	info, err := s.Do("INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	var calls int64
	for _, line := range strings.Split(info, "\r\n") {
		if !strings.HasPrefix(line, "cmdstat_evalsha:") && !strings.HasPrefix(line, "cmdstat_eval:") {
			continue
		}
		_, v, _ := strings.Cut(line, "calls=")
		v, _, _ = strings.Cut(v, ",")
		n, _ := strconv.ParseInt(v, 10, 64)
		calls += n
	}
	return calls
}

// BenchmarkPaired compares cellrate's GCRA with redis_rate at 1 and 16
// goroutines, one key per goroutine, admitting. Besides ns/op (wall time
// per decision, of all goroutines together) it reports cpu-ns/op: the CPU
// time of this process and of redis-server per decision (srv-cpu-ns/op:
// redis-server's alone, what bounds a server's decisions/s); reads/op: the
// reads the server processed per decision (one per pipeline write that
// reached it: 1/reads is how many decisions share one write); and, on
// Linux, syscalls/op: this process's read and write system calls per
// decision. -count repeats
// each sub-benchmark in a row, so for rounds that alternate run the binary
// several times:
//
//	go test -c -o /tmp/paired.test . && for i in 1 2 3 4 5 6; do
//	  /tmp/paired.test -test.run '^$' -test.bench Paired -test.benchtime 1s; done > paired.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /lib paired.txt
func BenchmarkPaired(b *testing.B) {
	c := benchClient(b)
	ds := deciders(b, c, benchRate, benchBurst)
	for _, g := range []int{1, 16} {
		for _, lib := range []string{"cellrate-gcra", "redis_rate"} {
			d := ds[lib]
			b.Run("g="+strconv.Itoa(g)+"/lib="+lib, func(b *testing.B) {
				b.ReportAllocs()
				cpu0, srv0 := processCPU(), serverCPU(b, benchServer)
				reads0, sys0 := serverStat(b, benchServer, "total_reads_processed"), processSyscalls()
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				for i := range g {
					wg.Add(1)
					go func() {
						defer wg.Done()
						key := "p" + strconv.Itoa(i)
						for next.Add(1) <= int64(b.N) {
							if _, err := d(bg, key); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				srv := serverCPU(b, benchServer) - srv0
				cpu := processCPU() - cpu0 + srv
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(srv.Nanoseconds())/float64(b.N), "srv-cpu-ns/op")
				reads := serverStat(b, benchServer, "total_reads_processed") - reads0
				b.ReportMetric(float64(reads)/float64(b.N), "reads/op")
				if sys := processSyscalls() - sys0; sys0 >= 0 {
					b.ReportMetric(float64(sys)/float64(b.N), "syscalls/op")
				}
			})
		}
	}
}
