//go:build linux

// Command vminit is /init in the initramfs the cross harness boots in an
// arm64 VM. It mounts proc, sys, dev and tmp, brings the loopback interface
// up (with 127.0.0.1/8 and ::1), runs each program the manifest
// lists (guest.ManifestPath), prints each one's output on the console
// between marker lines that carry its exit code, and powers the VM off.
//
// It is built static (CGO_ENABLED=0) so it needs nothing from the initramfs.
// Whatever goes wrong, it powers off: the host reads a missing "done" line,
// or a missing "end" line, as a failure.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cellrate/cellrate/cross/guest"
)

func main() {
	if err := mountAll(); err != nil {
		fmt.Println("vminit:", err)
		powerOff()
	}
	loopbackUp()
	m, err := readManifest()
	if err != nil {
		fmt.Println("vminit:", err)
		powerOff()
	}
	runAll(m)
	fmt.Println(guest.Done())
	powerOff()
}

// runAll runs the programs between their marker lines. One at a time, the
// output streams, so a hung run shows how far it got; m.Parallel at a time
// (most tests keep one CPU busy), each one's output is printed whole when
// it ends.
func runAll(m *guest.Manifest) {
	var mu sync.Mutex
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, m.Parallel) {
		wg.Go(func() {
			for i := range next {
				r, start := m.Runs[i], time.Now()
				if m.Parallel < 2 {
					fmt.Println("\n" + guest.Begin(i, r.Name))
					code := run(r, m.Env, os.Stdout)
					fmt.Println("\n" + guest.End(i, code, time.Since(start)))
					continue
				}
				var out bytes.Buffer
				code := run(r, m.Env, &out)
				mu.Lock()
				fmt.Printf("\n%s\n%s\n%s\n", guest.Begin(i, r.Name), out.Bytes(), guest.End(i, code, time.Since(start)))
				mu.Unlock()
			}
		})
	}
	for i := range m.Runs {
		next <- i
	}
	close(next)
	wg.Wait()
}

func mountAll() error {
	for _, m := range []struct{ src, dir, fstype string }{
		{"proc", "/proc", "proc"},
		{"sysfs", "/sys", "sysfs"},
		{"devtmpfs", "/dev", "devtmpfs"},
		{"tmpfs", "/tmp", "tmpfs"},
	} {
		if err := os.MkdirAll(m.dir, 0o755); err != nil {
			return err
		}
		if err := unix.Mount(m.src, m.dir, m.fstype, 0, ""); err != nil {
			return fmt.Errorf("mount %s: %w", m.dir, err)
		}
	}
	return nil
}

func readManifest() (*guest.Manifest, error) {
	b, err := os.ReadFile(guest.ManifestPath)
	if err != nil {
		return nil, err
	}
	var m guest.Manifest
	return &m, json.Unmarshal(b, &m)
}

// run runs r to completion and returns its exit code: -1 if it did not
// start or was killed by a signal.
func run(r guest.Run, env []string, out io.Writer) int {
	cmd := exec.Command(r.Argv[0], r.Argv[1:]...)
	cmd.Dir = r.Dir
	cmd.Env = append([]string{"HOME=/tmp", "TMPDIR=/tmp", "PATH=/bin"}, env...)
	cmd.Stdout = out
	cmd.Stderr = out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	fmt.Fprintln(out, "vminit:", err)
	return -1
}

func powerOff() {
	unix.Sync()
	if err := unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF); err != nil {
		fmt.Println("vminit: power off:", err)
	}
	// init must not exit; the kernel panics, and with panic=-1 and qemu's
	// -no-reboot that also ends the VM.
	os.Exit(1)
}
