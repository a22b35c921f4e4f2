package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/cellrate/cellrate/cross/guest"
)

// sysrootLib holds the arm64 loader and libc from libc6-arm64-cross, which
// the race detector's cgo-linked binaries need in the guest.
const sysrootLib = "/usr/aarch64-linux-gnu/lib"

// runVM boots one arm64 VM for row r that runs the probe and every test
// binary, o.vmParallel at a time, and fills res from its console output.
//
// qemu-user cannot run arm64 -race binaries (ThreadSanitizer rejects its
// 39-bit address space), hence a whole system: Debian's cloud kernel, and
// an initramfs holding vminit as /init, the binaries, their testdata and
// the libraries they link.
func runVM(o *options, r row, probe string, pkgs []pkg, res *rowResult) {
	dir := filepath.Join(o.work, r.Name)
	ramfs := filepath.Join(dir, "initramfs.cpio")
	if err := writeVMInitramfs(o, r, probe, pkgs, ramfs); err != nil {
		res.fail("initramfs: %v", err)
		return
	}
	kernel, err := o.kernel()
	if err != nil {
		res.fail("kernel: %v", err)
		return
	}
	cpu := r.CPU
	if cpu == "max" {
		// QEMU's own pointer-authentication algorithm: the architected one
		// is slow to emulate and tests nothing here.
		cpu += ",pauth-impdef=on"
	}
	// The console goes to its log as it comes, for `tail -f` on a long run.
	log := logFile(o, r, "console")
	f, err := os.Create(log)
	if err != nil {
		res.fail("console log: %v", err)
		return
	}
	defer f.Close()
	var console bytes.Buffer
	exit, err := runCmd(o.ctx, o.vmTimeout, []string{
		"qemu-system-aarch64", "-M", "virt", "-cpu", cpu, "-smp", "2", "-m", "2048",
		"-nodefaults", "-display", "none", "-serial", "stdio", "-no-reboot",
		"-kernel", kernel, "-initrd", ramfs,
		"-append", "console=ttyAMA0 quiet panic=-1",
	}, os.Environ(), dir, io.MultiWriter(&console, f), io.MultiWriter(&console, f))
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		res.fail("VM timed out after %v (console: %s)", o.vmTimeout, log)
	case exit != 0:
		res.fail("qemu-system-aarch64: exit %d: %v (console: %s)", exit, err, log)
	}
	runs, done := splitConsole(console.String())
	if !done {
		res.fail("VM: no done line: the guest died or hung (console: %s)", log)
	}
	if run, ok := runs[0]; ok {
		res.Path = lastWord(run.out)
		if run.exit != 0 {
			res.fail("path probe: exit %d: %s", run.exit, strings.TrimSpace(run.out))
		}
	}
	for i, p := range pkgs {
		run, ok := runs[i+1]
		oc := parseOutcome(run.out, run.exit)
		if !ok {
			oc = outcome{Exit: -1, Note: "did not finish in the VM"}
		}
		res.addPkg(o, p.ImportPath, oc, []byte(run.out), run.elapsed)
	}
}

// writeVMInitramfs lays out the guest's files and manifest and writes them
// as a cpio archive to file.
func writeVMInitramfs(o *options, r row, probe string, pkgs []pkg, file string) error {
	init, err := o.vminit()
	if err != nil {
		return err
	}
	t := newInitramfs()
	t.addFile("/init", 0o755, init)
	for _, d := range []string{"/proc", "/sys", "/tmp"} {
		t.mkdirAll(d)
	}
	m := guest.Manifest{
		Parallel: o.vmParallel,
		Env:      append(o.testEnv(r), "LD_LIBRARY_PATH=/lib"),
		Runs:     []guest.Run{{Name: "pathprobe", Dir: "/", Argv: []string{"/cellrate/pathprobe"}}},
	}
	t.addFile("/cellrate/pathprobe", 0o755, probe)
	if err := t.addLibs(probe, sysrootLib); err != nil {
		return err
	}
	for i, p := range pkgs {
		dir := fmt.Sprintf("/cellrate/run/%d", i)
		bin := path.Join(dir, filepath.Base(p.Binary))
		t.addFile(bin, 0o755, p.Binary)
		if err := t.addLibs(p.Binary, sysrootLib); err != nil {
			return err
		}
		if td := filepath.Join(p.Dir, "testdata"); isDir(td) {
			if err := t.addTree(path.Join(dir, "testdata"), td); err != nil {
				return err
			}
		}
		t.mkdirAll(dir)
		m.Runs = append(m.Runs, guest.Run{Name: p.ImportPath, Dir: dir, Argv: append([]string{bin}, o.testArgs()...)})
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	t.addData(guest.ManifestPath, b)
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return t.write(file)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// A guestRun is one run's output on the console, and its exit code.
type guestRun struct {
	out     string
	exit    int
	elapsed time.Duration
}

// splitConsole splits the VM's console output by the guest's marker lines
// into the runs that ended, by index, and reports whether the guest got to
// its done line. Output outside a run (kernel messages) is dropped.
func splitConsole(console string) (runs map[int]guestRun, done bool) {
	runs = map[int]guestRun{}
	cur := -1
	var out strings.Builder
	sc := bufio.NewScanner(strings.NewReader(console))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		m, ok := guest.Parse(line)
		switch {
		case !ok:
			if cur >= 0 {
				out.WriteString(line + "\n")
			}
		case m.Kind == "begin":
			cur = m.Index
			out.Reset()
		case m.Kind == "end" && m.Index == cur:
			runs[cur] = guestRun{out: out.String(), exit: m.Exit, elapsed: m.Elapsed}
			cur = -1
		case m.Kind == "done":
			done = true
		}
	}
	return runs, done
}
