package redis

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// TestServerCost prints the server's own time per script call (INFO
// commandstats usec_per_call of EVALSHA) for cellrate's GCRA and
// redis_rate, admitting, on one server, in rounds that alternate. Run with
//
//	CELLRATE_REDIS_REPORT=1 go test -run TestServerCost -v ./
func TestServerCost(t *testing.T) {
	if os.Getenv("CELLRATE_REDIS_REPORT") == "" {
		t.Skip("set CELLRATE_REDIS_REPORT=1")
	}
	s, c := server(t)
	ds := deciders(t, c, benchRate, benchBurst)
	names := []string{"cellrate-gcra", "redis_rate"}
	const rounds, per = 12, 2000
	for i := range rounds {
		line := "round " + strconv.Itoa(i) + ":"
		for _, name := range names {
			d := ds[name]
			d(bg, "cost") // loaded, and the key exists
			s.Do("CONFIG", "RESETSTAT")
			for range per {
				if _, err := d(bg, "cost"); err != nil {
					t.Fatal(err)
				}
			}
			line += " " + name + " " + usecPerCall(t, s)
		}
		t.Log(line)
	}
}

// usecPerCall is the usec_per_call of the client's script command.
func usecPerCall(t *testing.T, s *redistest.Server) string {
	info, err := s.Do("INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(line, "cmdstat_evalsha:") || strings.HasPrefix(line, "cmdstat_fcall:") {
			_, v, _ := strings.Cut(line, "usec_per_call=")
			v, _, _ = strings.Cut(v, ",")
			return v
		}
	}
	return "?"
}
