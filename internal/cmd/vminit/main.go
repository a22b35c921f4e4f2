//go:build linux

// Command vminit is /init in the initramfs the cross harness boots in an
// arm64 VM. It mounts proc, sys, dev and tmp, runs each program the manifest
// lists (guest.ManifestPath) with its output on the console, brackets each
// run with marker lines carrying its exit code, and powers the VM off.
//
// It is built static (CGO_ENABLED=0) so it needs nothing from the initramfs.
// Whatever goes wrong, it powers off: the host reads a missing "done" line,
// or a missing "end" line, as a failure.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cellrate/cellrate/internal/guest"
)

func main() {
	if err := mountAll(); err != nil {
		fmt.Println("vminit:", err)
		powerOff()
	}
	m, err := readManifest()
	if err != nil {
		fmt.Println("vminit:", err)
		powerOff()
	}
	for i, r := range m.Runs {
		fmt.Println("\n" + guest.Begin(i, r.Name))
		start := time.Now()
		code := run(r, m.Env)
		fmt.Println("\n" + guest.End(i, code, time.Since(start)))
	}
	fmt.Println(guest.Done())
	powerOff()
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
func run(r guest.Run, env []string) int {
	cmd := exec.Command(r.Argv[0], r.Argv[1:]...)
	cmd.Dir = r.Dir
	cmd.Env = append([]string{"HOME=/tmp", "TMPDIR=/tmp", "PATH=/bin"}, env...)
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stdout
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	fmt.Println("vminit:", err)
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
