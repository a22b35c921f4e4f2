package redis

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// TestServerCost prints the server's own time per call (INFO commandstats
// usec_per_call of FCALL or EVALSHA) for cellrate's GCRA as a Function
// (FCALL), as a script (EVALSHA, what a server before Redis 7 runs) and
// redis_rate, admitting and denying, on one server, in rounds that
// alternate, and the median over the rounds of each one's ratio to
// redis_rate's. Run with
//
//	CELLRATE_REDIS_REPORT=1 go test -run TestServerCost -v ./
func TestServerCost(t *testing.T) {
	if os.Getenv("CELLRATE_REDIS_REPORT") == "" {
		t.Skip("set CELLRATE_REDIS_REPORT=1")
	}
	s, c := server(t)
	for _, mode := range []struct {
		name  string
		rate  int
		burst int64
	}{{"admitting", benchRate, benchBurst}, {"denying", 1, 1}} {
		ds := deciders(t, c, mode.rate, mode.burst)
		ev, err := NewGCRA(c, "be:", int64(mode.rate), time.Second, mode.burst)
		if err != nil {
			t.Fatal(err)
		}
		ev.eval.Store(true)
		ds["cellrate-gcra-eval"] = ev.Allow
		serverCost(t, s, mode.name, ds)
	}
}

func serverCost(t *testing.T, s *redistest.Server, mode string, ds map[string]decider) {
	names := []string{"cellrate-gcra", "cellrate-gcra-eval", "redis_rate"}
	const rounds, per = 12, 2000
	ratios := map[string][]float64{}
	for i := range rounds {
		line := mode + " round " + strconv.Itoa(i) + ":"
		us := map[string]float64{}
		for _, name := range names {
			d := ds[name]
			d(bg, "cost") // loaded, and the key exists
			s.Do("CONFIG", "RESETSTAT")
			for range per {
				if _, err := d(bg, "cost"); err != nil {
					t.Fatal(err)
				}
			}
			us[name] = usecPerCall(t, s)
			line += fmt.Sprintf(" %s %.2f", name, us[name])
		}
		for _, name := range names[:2] {
			ratios[name] = append(ratios[name], us[name]/us["redis_rate"])
		}
		t.Log(line)
	}
	for _, name := range names[:2] {
		r := ratios[name]
		sort.Float64s(r)
		t.Logf("%s: %s / redis_rate usec_per_call, median of %d rounds: %.2fx (range %.2f-%.2f)",
			mode, name, rounds, (r[rounds/2-1]+r[rounds/2])/2, r[0], r[rounds-1])
	}
}

// usecPerCall is the usec_per_call of the client's script command.
func usecPerCall(t *testing.T, s *redistest.Server) float64 {
	info, err := s.Do("INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(line, "cmdstat_evalsha:") || strings.HasPrefix(line, "cmdstat_fcall:") || strings.HasPrefix(line, "cmdstat_fcall_ro:") {
			_, v, _ := strings.Cut(line, "usec_per_call=")
			v, _, _ = strings.Cut(v, ",")
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(line)
			}
			return f
		}
	}
	t.Fatal("no script command in INFO commandstats")
	return 0
}
