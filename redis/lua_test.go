package redis

import (
	"strconv"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// checkSchedule makes decisions on key, alone and then from 8 goroutines
// at once (so they go in pipelines), at caller times, each against the Go
// step of its own key; flush runs between the two and in the middle of
// the first.
func checkSchedule(t *testing.T, name string, c Client, flush func()) {
	t.Helper()
	g, err := NewGCRA(c, name+"g:", 7, time.Second, 3, WithGrace(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWindow(c, name+"w:", 5, time.Second, WithGrace(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	gref, _ := newGoGCRA(7, time.Second, 3)
	wref, _ := newGoWindow(5, time.Second)
	run := func(key string, decisions int) {
		var tat uint64
		var ws goWindowState
		now := time.Now().UnixNano()
		for i := range decisions {
			if i == decisions/2 && key == "alone" {
				flush()
			}
			now += int64(i%4) * 60e6
			n := int64(1 + i%3)
			next, want, _ := stepGoGCRA(gref, tat, now, n)
			if got, err := g.allowNAt(bg, key, now, n); err != nil || got != want {
				t.Errorf("%s gcra %s decision %d: %+v %v, want %+v", name, key, i, got, err, want)
				return
			}
			tat = next
			wnext, wwant, _ := stepGoWindow(wref, ws, now, n)
			if got, err := w.allowNAt(bg, key, now, n); err != nil || got != wwant {
				t.Errorf("%s window %s decision %d: %+v %v, want %+v", name, key, i, got, err, wwant)
				return
			}
			ws = wnext
		}
	}
	run("alone", 40)
	flush()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run("k"+strconv.Itoa(i), 40)
		}()
	}
	wg.Wait()
}

// TestFunctionsLoadedAgain: a server or cluster that lost the libraries
// (FUNCTION FLUSH, as an empty restart does) gets them again from the
// decision that finds them missing, alone or in a pipeline, and every
// decision is still the Go step's.
func TestFunctionsLoadedAgain(t *testing.T) {
	s, c := server(t)
	checkSchedule(t, "server", c, func() {
		if _, err := s.Do("FUNCTION", "FLUSH"); err != nil {
			t.Fatal(err)
		}
	})
	if n, err := c.FunctionList(bg, goredis.FunctionListQuery{}).Result(); err != nil || len(n) != 2 {
		t.Fatalf("libraries on the server: %d %v, want 2", len(n), err)
	}
	if testing.Short() {
		return
	}
	cl := redistest.StartCluster(t, 3, 0)
	checkSchedule(t, "cluster", cl.Client(t), func() {
		for _, n := range cl.Nodes {
			if _, err := n.Do("FUNCTION", "FLUSH"); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestNoFunctions: on a server without FCALL (before Redis 7; here renamed
// away), one that cannot load functions (FUNCTION renamed away) and for a
// user whose ACL forbids FUNCTION, the limiters run their scripts, with the
// same decisions, NOSCRIPT (SCRIPT FLUSH) included, and load nothing.
func TestNoFunctions(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		user string
	}{
		{"nofcall", []string{"--rename-command", "FCALL", ""}, ""},
		{"nofunction", []string{"--rename-command", "FUNCTION", ""}, ""},
		{"acl", nil, "limited"},
	} {
		s := redistest.StartWith(t, tc.args...)
		c := s.Client(t)
		if tc.user != "" {
			if _, err := s.Do("ACL", "SETUSER", tc.user, "on", ">pw", "+@all", "-function", "~*"); err != nil {
				t.Fatal(err)
			}
			c = goredis.NewClient(&goredis.Options{Addr: s.Addr, Username: tc.user, Password: "pw"})
			t.Cleanup(func() { c.Close() })
		}
		checkSchedule(t, tc.name, c, func() {
			if _, err := s.Do("SCRIPT", "FLUSH"); err != nil {
				t.Fatal(err)
			}
		})
		if tc.name == "nofunction" {
			continue
		}
		if n, err := s.Client(t).FunctionList(bg, goredis.FunctionListQuery{}).Result(); err != nil || len(n) != 0 {
			t.Fatalf("%s: %d libraries loaded, %v", tc.name, len(n), err)
		}
	}
}

// TestPipelineLoadsAgain: a pipeline of calls that all find the library
// missing still decides each of them, as does one sent to a server without
// FCALL.
func TestPipelineLoadsAgain(t *testing.T) {
	for _, old := range []bool{false, true} {
		var s *redistest.Server
		if old {
			s = redistest.StartWith(t, "--rename-command", "FCALL", "")
		} else {
			s = redistest.Start(t)
		}
		l, err := NewGCRA(s.Client(t), "pl:", 7, time.Second, 3)
		if err != nil {
			t.Fatal(err)
		}
		for round := range 2 { // never loaded, then flushed
			if round == 1 {
				if _, err := s.Do("FUNCTION", "FLUSH"); err != nil {
					t.Fatal(err)
				}
			}
			var batch []*argBuf
			for i := range 3 {
				b := argPool.New().(*argBuf)
				b.keys[0] = l.keyOf(strconv.Itoa(round*3 + i))
				b.prog = l.prog.Load()
				b.args = append(b.args, 0, 0, 0, 1, 0)
				b.ctx = bg
				batch = append(batch, b)
			}
			l.flush(batch)
			for i, b := range batch {
				if v, err := ints(b.cmd, nil); err != nil || len(v) != 5 || v[0] != 1 || v[1] != 1 {
					t.Fatalf("without FCALL %v, round %d call %d: %v %v, want 1 admitted", old, round, i, v, err)
				}
			}
		}
	}
}
