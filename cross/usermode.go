package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// argv returns the command line that runs bin for r: under the row's
// user-mode emulator and CPU model, or directly.
func argv(r row, bin string, args ...string) []string {
	var a []string
	if r.Runner == qemuUser {
		a = append(a, r.QEMU)
		if r.CPU != "" {
			a = append(a, "-cpu", r.CPU)
		}
	}
	return append(append(a, bin), args...)
}

// runUser runs the probe and then every test binary for a native or
// qemu-user row, one after the other, and fills res.
func runUser(o *options, r row, probe string, pkgs []pkg, res *rowResult) {
	env := append(os.Environ(), o.testEnv(r)...)
	var stdout, stderr bytes.Buffer
	if exit, err := runCmd(o.ctx, o.testTimeout, argv(r, probe), env, "", &stdout, &stderr); exit != 0 {
		res.fail("path probe: exit %d: %v: %s", exit, err, strings.TrimSpace(stderr.String()))
	}
	res.Path = lastWord(stdout.String())
	for _, p := range pkgs {
		var out bytes.Buffer
		start := time.Now()
		exit, err := runCmd(o.ctx, o.testTimeout+time.Minute, argv(r, p.Binary, o.testArgs()...), env, p.Dir, &out, &out)
		oc := parseOutcome(out.String(), exit)
		if errors.Is(err, context.DeadlineExceeded) {
			oc.Note = "timed out"
		}
		res.addPkg(o, p.ImportPath, oc, out.Bytes(), time.Since(start))
	}
}

// runCmd runs argv in dir with env, killing it after timeout, and returns
// its exit code (-1 when it did not start or was killed) and the error that
// explains a non-zero one; context.DeadlineExceeded means it timed out.
func runCmd(ctx context.Context, timeout time.Duration, argv, env []string, dir string, stdout, stderr io.Writer) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return -1, ctx.Err()
	}
	var e *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &e):
		return e.ExitCode(), err
	}
	return -1, err
}

// lastWord is the last space-separated word of s: the probe's answer.
func lastWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}
