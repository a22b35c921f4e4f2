package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The self-tests run the harness itself on planted faults and check that
// each one fails it, for the reason planted. They boot VMs and take a
// minute or two, so they run only under `make cross-selftest`.

// harness builds the harness and returns a function that runs it from this
// module's directory (the main module is its parent) with args, returning its exit code and its rows' results.
func harness(t *testing.T) func(args ...string) (int, []rowResult) {
	if os.Getenv("CELLRATE_CROSS_SELFTEST") != "1" {
		t.Skip("set CELLRATE_CROSS_SELFTEST=1 (make cross-selftest)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "cross")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	n := 0
	return func(args ...string) (int, []rowResult) {
		n++
		js := filepath.Join(dir, "results.json")
		os.Remove(js)
		work := filepath.Join(dir, fmt.Sprint("work", n))
		cmd := exec.Command(bin, append([]string{"-only", "rows", "-json", js, "-work", work}, args...)...)
		out, _ := cmd.CombinedOutput()
		t.Logf("cross %s:\n%s", strings.Join(args, " "), out)
		var rs []rowResult
		if b, err := os.ReadFile(js); err == nil {
			if err := json.Unmarshal(b, &rs); err != nil {
				t.Fatal(err)
			}
		}
		return cmd.ProcessState.ExitCode(), rs
	}
}

const racyTest = `package racy

import (
	"sync"
	"testing"
)

// TestPlantedRace increments a counter from two goroutines unsynchronized.
func TestPlantedRace(t *testing.T) {
	var n int
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				n++
			}
		}()
	}
	wg.Wait()
	t.Log(n)
}
`

func TestSelfPlantedRace(t *testing.T) {
	run := harness(t)
	mod := t.TempDir()
	for name, body := range map[string]string{"go.mod": "module racy\n\ngo 1.25\n", "racy_test.go": racyTest} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, rs := run("-rows", "amd64-race,arm64-race-lse,arm64-race-nolse", "-module", mod)
	if code == 0 {
		t.Fatal("harness exited 0 with a planted data race")
	}
	if len(rs) != 3 {
		t.Fatalf("got %d rows, want 3", len(rs))
	}
	for _, r := range rs {
		if len(r.Pkgs) != 1 || !r.Pkgs[0].Race || r.ok() {
			t.Errorf("%s: the planted race was not reported: %+v", r.Name, r.Pkgs)
		}
	}
}

func TestSelfPlantedWrongPath(t *testing.T) {
	run := harness(t)
	// CELLRATE_ATOMIC128_PATH forces atomic128's choice at init: the
	// fallback where the CPU has a better path is a wrong selection.
	code, rs := run("-rows", "arm64-lse,amd64-avx,arm64-race-nolse", "-module", ".:./atomic128",
		"-env", "CELLRATE_ATOMIC128_PATH=fallback")
	if code == 0 {
		t.Fatal("harness exited 0 with a planted wrong path")
	}
	if len(rs) != 3 {
		t.Fatalf("got %d rows, want 3", len(rs))
	}
	for _, r := range rs {
		want := `path: atomic128 selected "fallback", want "` + r.Expect + `"`
		if !strings.Contains(strings.Join(r.Problems, "\n"), want) {
			t.Errorf("%s: no %q in %q", r.Name, want, r.Problems)
		}
	}
}

// TestSelfControl runs the same harness on a row whose path is the fallback
// and with no plant: it must pass, so the failures above come from the plants.
func TestSelfControl(t *testing.T) {
	run := harness(t)
	if code, rs := run("-rows", "amd64-purego,arm64-purego", "-module", ".:./atomic128"); code != 0 {
		t.Fatalf("harness exited %d on clean rows: %+v", code, rs)
	}
}
