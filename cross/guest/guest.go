// Package guest is the contract between the cross harness and the init
// program it boots in an arm64 VM: where the manifest lives in the initramfs,
// what it says, and the marker lines the guest prints on its console so the
// host can split the output per run and read each exit code.
package guest

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ManifestPath is where the host puts the manifest in the initramfs.
const ManifestPath = "/cellrate/manifest.json"

// A Manifest lists the programs the guest runs, in order.
type Manifest struct {
	Env      []string // added to every run's environment, KEY=VALUE
	Runs     []Run
	Parallel int // runs at a time; below 2, one after the other
}

// A Run is one program: a test binary or the path probe.
type Run struct {
	Name string   // shown in markers, e.g. an import path
	Dir  string   // working directory in the guest
	Argv []string // Argv[0] is the absolute path of the binary
}

// marker starts every line the guest prints about a run; test output never
// starts a line with it.
const marker = "@@cellrate-guest"

// Begin is the line printed before run i starts.
func Begin(i int, name string) string { return fmt.Sprintf("%s begin %d %s", marker, i, name) }

// End is the line printed after run i exited with code exit (-1: it could
// not be started or was killed) after running for elapsed.
func End(i, exit int, elapsed time.Duration) string {
	return fmt.Sprintf("%s end %d exit=%d ms=%d", marker, i, exit, elapsed.Milliseconds())
}

// Done is the line printed after the last run, before power-off.
func Done() string { return marker + " done" }

// A Line is a parsed marker line.
type Line struct {
	Kind    string // "begin", "end" or "done"
	Index   int
	Exit    int           // for "end"
	Elapsed time.Duration // for "end"
}

// Parse reports whether s is a marker line and what it says. Leading
// carriage returns and spaces from the serial console are ignored.
func Parse(s string) (Line, bool) {
	s = strings.TrimSpace(s)
	rest, ok := strings.CutPrefix(s, marker+" ")
	if !ok {
		return Line{}, false
	}
	f := strings.Fields(rest)
	switch {
	case len(f) == 1 && f[0] == "done":
		return Line{Kind: "done"}, true
	case len(f) >= 2 && f[0] == "begin":
		i, err := strconv.Atoi(f[1])
		return Line{Kind: "begin", Index: i}, err == nil
	case len(f) == 4 && f[0] == "end" && strings.HasPrefix(f[2], "exit=") && strings.HasPrefix(f[3], "ms="):
		i, err1 := strconv.Atoi(f[1])
		e, err2 := strconv.Atoi(strings.TrimPrefix(f[2], "exit="))
		ms, err3 := strconv.ParseInt(strings.TrimPrefix(f[3], "ms="), 10, 64)
		l := Line{Kind: "end", Index: i, Exit: e, Elapsed: time.Duration(ms) * time.Millisecond}
		return l, err1 == nil && err2 == nil && err3 == nil
	}
	return Line{}, false
}
