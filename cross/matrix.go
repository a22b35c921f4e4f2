package main

import (
	"os"
	"path"
	"slices"
	"strings"
)

// How a row's binaries are run.
type runner string

const (
	native   runner = "native"    // on this host, no emulation
	qemuUser runner = "qemu-user" // under qemu's user-mode emulator
	vm       runner = "vm"        // in qemu-system-aarch64 -M virt, see vm.go
)

// A row is one line of the matrix: one build of every test binary, run on
// one CPU model, with the path atomic128 must select there.
type row struct {
	Name   string
	GOARCH string
	Tags   string // build tags, e.g. "purego"
	Race   bool
	Runner runner
	QEMU   string // the user-mode emulator, for qemuUser
	CPU    string // qemu's -cpu model; "" means the host's
	Expect string // the path atomic128.Path must report
	Env    []string
}

// rows is the matrix. The expected paths are the contract the asm package
// keeps: CASP with LSE, LDAXP/STLXP without it; VMOVDQA loads with AVX,
// CMPXCHG16B alone without; the fallback when the CPU lacks CMPXCHG16B,
// under purego, and on every architecture without assembly.
var rows = []row{
	{Name: "arm64-lse", GOARCH: "arm64", Runner: qemuUser, QEMU: "qemu-aarch64", CPU: "max", Expect: "casp"},
	{Name: "arm64-nolse", GOARCH: "arm64", Runner: qemuUser, QEMU: "qemu-aarch64", CPU: "cortex-a57", Expect: "llsc"},
	{Name: "arm64-purego", GOARCH: "arm64", Tags: "purego", Runner: qemuUser, QEMU: "qemu-aarch64", CPU: "max", Expect: "fallback"},
	{Name: "arm64-race-lse", GOARCH: "arm64", Race: true, Runner: vm, CPU: "max", Expect: "casp"},
	{Name: "arm64-race-nolse", GOARCH: "arm64", Race: true, Runner: vm, CPU: "cortex-a57", Expect: "llsc"},
	// QEMU 7.2's TCG splits a 16-byte VMOVDQA into two 8-byte loads, so
	// with guest threads running in parallel the emulator tears what real
	// AVX hardware loads whole (measured: TestTornRead fails under qemu at
	// the default GOMAXPROCS, passes natively). With one P, qemu-user runs
	// each instruction whole between signals: the row proves the dispatch
	// and the suite on this path; amd64-race proves atomicity on the host.
	{Name: "amd64-avx", GOARCH: "amd64", Runner: qemuUser, QEMU: "qemu-x86_64", CPU: "Haswell", Expect: "cx16-vmovdqa", Env: []string{"GOMAXPROCS=1"}},
	{Name: "amd64-cx16", GOARCH: "amd64", Runner: qemuUser, QEMU: "qemu-x86_64", CPU: "Penryn", Expect: "cx16"},
	{Name: "amd64-nocx16", GOARCH: "amd64", Runner: qemuUser, QEMU: "qemu-x86_64", CPU: "Penryn,-cx16", Expect: "fallback"},
	{Name: "amd64-purego", GOARCH: "amd64", Tags: "purego", Runner: native, Expect: "fallback"},
	{Name: "amd64-race", GOARCH: "amd64", Race: true, Runner: native, Expect: hostAMD64Path()},
	{Name: "386", GOARCH: "386", Runner: native, Expect: "fallback"},
	{Name: "s390x", GOARCH: "s390x", Runner: qemuUser, QEMU: "qemu-s390x", CPU: "qemu", Expect: "fallback"},
}

// hostAMD64Path is the path atomic128 must select on this host's CPU, read
// from the flags in /proc/cpuinfo.
func hostAMD64Path() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown: " + err.Error()
	}
	var flags []string
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags = strings.Fields(v)
			break
		}
	}
	switch {
	case slices.Contains(flags, "cx16") && slices.Contains(flags, "avx"):
		return "cx16-vmovdqa"
	case slices.Contains(flags, "cx16"):
		return "cx16"
	}
	return "fallback"
}

// target is the row's GOOS/GOARCH with its build tags, for the table.
func (r row) target() string {
	t := "linux/" + r.GOARCH
	if r.Tags != "" {
		t += " " + r.Tags
	}
	return t
}

// cpu is the row's CPU model for the table, with the row's environment.
func (r row) cpu() string {
	cpu := r.CPU
	if cpu == "" {
		cpu = "host"
	}
	return strings.Join(append([]string{cpu}, r.Env...), " ")
}

// selectRows returns the rows whose names match one of the comma-separated
// path.Match patterns in sel (e.g. "arm64-race-*,386"), or all rows when sel
// is empty.
func selectRows(sel string) []row {
	if sel == "" {
		return rows
	}
	var out []row
	for _, r := range rows {
		for _, p := range strings.Split(sel, ",") {
			if ok, _ := path.Match(p, r.Name); ok {
				out = append(out, r)
				break
			}
		}
	}
	return out
}
