package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		name     string
		want     benchName
		ok, fail bool
	}{
		{name: "Limiter/admit/clock/x-time-rate/g=1", want: benchName{"Limiter/admit/clock", "x-time-rate", 1, ""}, ok: true},
		{name: "Counter/add/mutex/g=16", want: benchName{"Counter/add", "mutex", 16, ""}, ok: true},
		// go test's name for a repeated sub-benchmark (GOMAXPROCS 1 used to run g=1 twice).
		{name: "Counter/add/mutex/g=1#01", want: benchName{"Counter/add", "mutex", 1, "#01"}, ok: true},
		{name: "Pair/cas-inc/mutex-pair/g=8#12", want: benchName{"Pair/cas-inc", "mutex-pair", 8, "#12"}, ok: true},
		{name: "Counter/add/mutex", ok: false},
		{name: "Counter/add/mutex/g=0", fail: true},
		{name: "Counter/add/mutex/g=-2", fail: true},
		{name: "Counter/add/mutex/g=", fail: true},
		{name: "Counter/add/mutex/g=x", fail: true},
		{name: "Counter/add/mutex/g=01", fail: true},
		{name: "Counter/add/mutex/g=1#", fail: true},
		{name: "Counter/add/mutex/g=1#x", fail: true},
		{name: "Counter/g=1", fail: true},
	} {
		got, ok, err := split(c.name)
		if (err != nil) != c.fail || ok != c.ok || got != c.want {
			t.Errorf("split(%q) = %+v, %v, %v; want %+v, %v, error %v", c.name, got, ok, err, c.want, c.ok, c.fail)
		}
	}
}

func TestTrimProcs(t *testing.T) {
	for _, c := range []struct {
		in    string
		procs int
		want  string
		p     int
	}{
		{"Counter/add/mutex/g=16-2", 0, "Counter/add/mutex/g=16", 2},
		{"Counter/add/mutex/g=16-2", 2, "Counter/add/mutex/g=16", 2},
		{"Counter/add/mutex/g=1#01-2", 0, "Counter/add/mutex/g=1#01", 2},
		{"Counter/add/mutex/g=1", 0, "Counter/add/mutex/g=1", 0},                   // GOMAXPROCS 1: no suffix
		{"Counter/add/sync-atomic-64/g=1", 0, "Counter/add/sync-atomic-64/g=1", 0}, // a dash before the last /
		{"Counter/add/mutex/size-64", 1, "Counter/add/mutex/size-64", 0},           // GOMAXPROCS 1 known: -64 is the name's
	} {
		got, p := trimProcs(c.in, c.procs)
		if got != c.want || p != c.p {
			t.Errorf("trimProcs(%q, %d) = %q, %d; want %q, %d", c.in, c.procs, got, p, c.want, c.p)
		}
	}
}

func TestParseGOMAXPROCS1(t *testing.T) {
	raw, err := os.ReadFile("testdata/gomaxprocs1-repeated.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if r.procs != 1 || r.usable != 0 || r.cpu != "AMD EPYC" {
		t.Errorf("procs %d, usable %d, cpu %q; want 1, 0, AMD EPYC", r.procs, r.usable, r.cpu)
	}
	if len(r.dups) != 6 || !slices.Contains(r.dups, "Pair/cas-inc/mutex-pair/g=1#01") {
		t.Errorf("dups = %v, want the six g=1#01", r.dups)
	}
	for _, tab := range r.tables(baseline) {
		want := []int{1, 8}
		if tab.group() == "Clock" {
			want = []int{1}
		}
		if !slices.Equal(tab.gs, want) {
			t.Errorf("%s: goroutine counts %v, want %v", tab.scenario, tab.gs, want)
		}
		if r.contended(tab) {
			t.Errorf("%s: a contention column with GOMAXPROCS 1", tab.scenario)
		}
	}
	// The first g=1 sample is kept, not the repeat's.
	if s := r.stat("Limiter/admit/injected/cellrate-gcra/g=1"); s.n != 1 || s.median != 17.09 {
		t.Errorf("cellrate-gcra g=1: %+v, want the one sample 17.09", s)
	}
}

func TestParseConfigLines(t *testing.T) {
	raw := []byte("gomaxprocs: 2\nusable-cpus: 1\ncpu: X\nBenchmarkCounter/add/mutex/g=1-2 \t 10 \t 5.0 ns/op\nBenchmarkCounter/add/mutex/g=2-2 \t 10 \t 9.0 ns/op\n")
	r, err := parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if r.procs != 2 || r.usable != 1 || len(r.order) != 2 {
		t.Fatalf("procs %d, usable %d, names %v", r.procs, r.usable, r.order)
	}
	for _, bad := range []string{
		"BenchmarkCounter/add/mutex/g=0 \t 10 \t 5.0 ns/op\n",
		"BenchmarkCounter/add/mutex/g=one \t 10 \t 5.0 ns/op\n",
		"gomaxprocs: zero\n",
		"usable-cpus: 0\n",
		"goos: linux\n", // no benchmarks
	} {
		if _, err := parse([]byte(bad)); err == nil {
			t.Errorf("parse(%q) succeeded", bad)
		}
	}
}

func TestCPUNotes(t *testing.T) {
	for _, c := range []struct {
		procs, usable int
		gs            []int
		want          []string // substrings, one per note
	}{
		{1, 1, []int{1, 8}, []string{"GOMAXPROCS is 1: one goroutine runs at a time, so no column measures contention"}},
		{2, 2, []int{1, 2, 16}, []string{"g=2 column runs one goroutine per P", "g=16 runs more goroutines than the 2 CPUs"}},
		{2, 1, []int{1, 2, 16}, []string{"GOMAXPROCS (2) exceeds the CPUs this process may use (1): the g=2 column measures goroutines time-slicing on 1 CPU, not contention",
			"g=16 runs more goroutines than the 1 CPU"}},
		{4, 0, []int{1, 4, 32}, []string{"g=4 column", "g=32 runs more goroutines than the 4 CPUs"}},
		{8, 8, []int{1}, []string{"g=8 column"}},
	} {
		notes := cpuNotes(c.procs, c.usable, c.gs)
		if len(notes) != len(c.want) {
			t.Errorf("cpuNotes(%d, %d, %v) = %q, want %d notes", c.procs, c.usable, c.gs, notes, len(c.want))
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(notes[i], w) {
				t.Errorf("cpuNotes(%d, %d, %v)[%d] = %q, want it to say %q", c.procs, c.usable, c.gs, i, notes[i], w)
			}
		}
	}
}

// report is an existing report directory: its files and their contents.
func report(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = string(b)
	}
	return m
}

// oldReport makes parent/report holding an old report and returns its path.
func oldReport(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"README.md": "old readme", "bench.txt": "old bench", "limiters.svg": "old chart"} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// untouched checks that out holds the old report and nothing else is
// left beside it.
func untouched(t *testing.T, out string) {
	t.Helper()
	got := report(t, out)
	want := map[string]string{"README.md": "old readme", "bench.txt": "old bench", "limiters.svg": "old chart"}
	if len(got) != len(want) {
		t.Errorf("%s holds %d files, want the old %d: %v", out, len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s/%s = %q, want the old %q", out, k, got[k], v)
		}
	}
	left, _ := os.ReadDir(filepath.Dir(out))
	if len(left) != 1 {
		t.Errorf("beside the report: %v, want nothing", left)
	}
}

func TestPublishFailureLeavesTargetUntouched(t *testing.T) {
	out := oldReport(t)
	boom := errors.New("boom")
	err := publish(context.Background(), out, func(dir string) error {
		// Half a report, then a failure (the chart panic did this).
		if err := os.WriteFile(filepath.Join(dir, "bench.txt"), []byte("new bench"), 0o644); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("publish: %v, want boom", err)
	}
	untouched(t, out)
}

func TestPublishInterruptedLeavesTargetUntouched(t *testing.T) {
	out := oldReport(t)
	ctx, cancel := context.WithCancel(context.Background())
	err := publish(ctx, out, func(dir string) error {
		cancel() // an interrupt while the report is being written
		return os.WriteFile(filepath.Join(dir, "README.md"), []byte("new"), 0o644)
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("publish: %v, want context.Canceled", err)
	}
	untouched(t, out)
}

func TestPublishReplacesWholeReport(t *testing.T) {
	out := oldReport(t)
	err := publish(context.Background(), out, func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "README.md"), []byte("new"), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := report(t, out); len(got) != 1 || got["README.md"] != "new" {
		t.Errorf("report after publish: %v, want only the new README.md", got)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("report directory: %v, %v; want mode 0755", fi.Mode(), err)
	}
	if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 1 {
		t.Errorf("beside the report: %v, want nothing", left)
	}
	// Into a directory that does not exist yet.
	fresh := filepath.Join(t.TempDir(), "a", "b")
	if err := publish(context.Background(), fresh, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error(err)
	}
}

// TestRunGOMAXPROCS1 renders the output of a one-CPU run from before the
// fix (goroutine counts [1 1 8], so names g=1#01 and no -N suffix): the
// old report panicked in the chart code after rewriting bench.txt.
func TestRunGOMAXPROCS1(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report")
	o := options{out: out, in: "testdata/gomaxprocs1-repeated.txt", pattern: ".", format: "svg",
		cfg: config{count: 1, benchtime: "1x", requests: 2000, quick: true}}
	if err := run(context.Background(), o, io.Discard); err != nil {
		t.Fatal(err)
	}
	got := report(t, out)
	for _, f := range []string{"README.md", "bench.txt", "limiters.svg", "primitives.svg"} {
		if got[f] == "" {
			t.Errorf("%s missing or empty", f)
		}
	}
	md := got["README.md"]
	for _, want := range []string{"AMD EPYC", "GOMAXPROCS 1", "GOMAXPROCS is 1", "| g=1 ns/op | vs x-time-rate | g=8 ns/op | vs x-time-rate |", "g=1#01"} {
		if !strings.Contains(md, want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
	if strings.Contains(md, " / g=1") {
		t.Error("README.md has a contention column with GOMAXPROCS 1")
	}
}

func TestRunGOMAXPROCS2(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report")
	o := options{out: out, in: "testdata/gomaxprocs2.txt", pattern: ".", format: "png",
		cfg: config{count: 5, benchtime: "1x", requests: 2000}}
	if err := run(context.Background(), o, io.Discard); err != nil {
		t.Fatal(err)
	}
	got := report(t, out)
	if got["limiters.png"] == "" || got["primitives.png"] == "" {
		t.Errorf("charts missing: %v", slices.Sorted(func(yield func(string) bool) {
			for k := range got {
				if !yield(k) {
					return
				}
			}
		}))
	}
	md := got["README.md"]
	for _, want := range []string{"GOMAXPROCS 2", "| g=1 ns/op | vs x-time-rate | g=2 ns/op | vs x-time-rate | g=16 ns/op | vs x-time-rate | g=2 / g=1 |", "g=16 runs more goroutines"} {
		if !strings.Contains(md, want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
}

// TestRunBadNameLeavesTargetUntouched: output the report cannot read
// fails with an error naming the benchmark, before anything is written.
func TestRunBadNameLeavesTargetUntouched(t *testing.T) {
	out := oldReport(t)
	in := filepath.Join(t.TempDir(), "bench.txt")
	if err := os.WriteFile(in, []byte("BenchmarkCounter/add/mutex/g=1 \t 10 \t 5.0 ns/op\nBenchmarkCounter/add/mutex/g=x1 \t 10 \t 5.0 ns/op\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := options{out: out, in: in, pattern: ".", format: "svg", cfg: config{count: 1, requests: 2000}}
	err := run(context.Background(), o, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `"Counter/add/mutex/g=x1"`) {
		t.Fatalf("run: %v, want an error naming the benchmark", err)
	}
	untouched(t, out)
}
