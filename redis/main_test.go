package redis

import (
	"context"
	"encoding/binary"
	"flag"
	"math"
	"os"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

var bg = context.Background()

// quiet drops go-redis's log lines (dial failures while a test has a
// server down on purpose).
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func init() { goredis.SetLogger(quiet{}) }

// TestMain runs the tests that call t.Parallel up to 16 at a time unless
// -parallel is given: they wait on sleeps and round trips, not on the CPU,
// so the default (GOMAXPROCS) would keep most of them waiting on a small
// machine. It kills the servers the tests and benchmarks shared at the end.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "16")
	}
	code := m.Run()
	for _, f := range benchCleanups {
		f()
	}
	redistest.KillShared()
	os.Exit(code)
}

// server returns the shared redis-server, emptied for this test, and a
// client of it: for tests that neither kill, pause nor reconfigure their
// server (those start their own with redistest.Start).
func server(t testing.TB) (*redistest.Server, *goredis.Client) {
	s := redistest.Shared(t)
	return s, s.Client(t)
}

// longTest skips t under -short: the fault tests that kill, pause or
// restart servers, or start a cluster, run in make test's full run.
func longTest(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("kills, pauses or restarts servers, or starts a cluster: not under -short")
	}
}

// rawState returns the doubles a key holds (nil if there is no key).
func rawState(t testing.TB, c goredis.Cmdable, key string, n int) []float64 {
	t.Helper()
	b, err := c.Get(bg, key).Bytes()
	if err == goredis.Nil {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return decodeState(t, key, b, n)
}

// decodeState returns the n doubles of key's value b.
func decodeState(t testing.TB, key string, b []byte, n int) []float64 {
	t.Helper()
	if len(b) != 8*n {
		t.Fatalf("key %s holds %d bytes, want %d", key, len(b), 8*n)
	}
	f := make([]float64, n)
	for i := range f {
		f[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		if f[i] != math.Trunc(f[i]) || math.Abs(f[i]) >= 1<<53 {
			t.Fatalf("key %s: value %v is not an exact integer", key, f[i])
		}
	}
	return f
}

// parallelIfShort runs a test that checks admission figures (lower bounds
// of what is admitted, round trips per admission) before the parallel tests
// start, so nothing else in the package loads the machine while it
// measures. With -short such a test checks the bound only and runs in
// parallel.
func parallelIfShort(t *testing.T) {
	if testing.Short() {
		t.Parallel()
	}
}
