package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Gremlins runs a mutant only if its position lies in a block of the
// package's coverage profile, and Go's cover tool puts no block around the
// expressions of a switch's case clauses (nor some other expressions between
// statements): it calls such mutants "not covered" though the tests run
// them. And it times a mutant out at a multiple of its coverage run, which
// for a small package with a cached build is shorter than building the
// mutant. So mutate runs again, itself, every mutant gremlins left not
// covered or timed out, with the same rule (the package's -short tests;
// killed if they fail, timed out past 4x the package's clean test run, build
// included, plus 10 s), through `go test -overlay`, which swaps in the
// mutated file without copying the module.

// resumable reads the statuses of an earlier re-run (rerunFile's bytes),
// without those that lived: a resumed run runs them again, as it does the
// mutants gremlins saw live, so that tests added since count.
func resumable(b []byte) (map[string]string, error) {
	statuses := map[string]string{}
	if err := json.Unmarshal(b, &statuses); err != nil {
		return nil, err
	}
	for k, st := range statuses {
		if st == lived {
			delete(statuses, k)
		}
	}
	return statuses, nil
}

// rerunKey names a mutant in the re-run results.
func rerunKey(file string, line, col int, typ string) string {
	return fmt.Sprintf("%s:%d:%d:%s", file, line, col, typ)
}

// rerunGremlins runs the not-covered and timed-out mutants of gremlins'
// results in resultFile and writes their statuses to rerunFile, after each
// one (so a run stopped at its budget keeps them); with resume it runs only
// those rerunFile does not hold yet, and the ones that lived too, so that
// tests added since the gremlins run count. It returns how many it holds.
func rerunGremlins(ctx context.Context, pkg, resultFile, rerunFile, tmp string, resume bool) (int, error) {
	b, err := os.ReadFile(resultFile)
	if err != nil {
		return 0, err
	}
	var res gremlinsResult
	if err := json.Unmarshal(b, &res); err != nil {
		return 0, err
	}
	statuses := map[string]string{}
	if b, err := os.ReadFile(rerunFile); resume && err == nil {
		if statuses, err = resumable(b); err != nil {
			return 0, err
		}
	}
	save := func() error {
		out, _ := json.MarshalIndent(statuses, "", "  ")
		return os.WriteFile(rerunFile, out, 0o644)
	}
	var clean time.Duration
	for _, f := range res.Files {
		file := filepath.Join(pkg, f.Filename)
		for _, g := range f.Mutations {
			key := rerunKey(filepath.ToSlash(file), g.Line, g.Column, g.Type)
			if _, done := statuses[key]; done || !rerunnable(g.Status) && !(resume && g.Status == lived) {
				continue
			}
			if clean == 0 {
				// The package's clean test time, for the time-out.
				start := time.Now()
				if st, err := goTest(ctx, pkg, "", time.Hour); err != nil || st != lived {
					return 0, fmt.Errorf("%s: the tests fail without a mutant (%s %v)", pkg, st, err)
				}
				clean = time.Since(start)
			}
			st, err := runMutant(ctx, pkg, file, g.Line, g.Column, g.Type, tmp, 4*clean+10*time.Second)
			if err != nil {
				return 0, err
			}
			statuses[key] = st
			if err := save(); err != nil {
				return 0, err
			}
		}
	}
	return len(statuses), save()
}

// runMutant applies one mutation to a copy of file and runs pkg's tests on
// it.
func runMutant(ctx context.Context, pkg, file string, line, col int, typ, tmp string, timeout time.Duration) (string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	mutated, err := mutate(src, line, col, typ)
	if err != nil {
		return "", fmt.Errorf("%s:%d:%d: %w", file, line, col, err)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	mfile := filepath.Join(tmp, "mutant.go")
	if err := os.WriteFile(mfile, mutated, 0o644); err != nil {
		return "", err
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {abs: mfile}})
	ofile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ofile, overlay, 0o644); err != nil {
		return "", err
	}
	st, err := goTest(ctx, pkg, ofile, timeout)
	fmt.Fprintf(os.Stderr, "mutate: %11s %s at %s:%d:%d (re-run)\n", st, typ, file, line, col)
	return st, err
}

// mutate returns src with the operator at line:col replaced as gremlins
// would for typ.
func mutate(src []byte, line, col int, typ string) ([]byte, error) {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			return nil, errors.New("no such line")
		}
		off += i + 1
	}
	end := bytes.IndexByte(src[off:], '\n')
	if end < 0 {
		end = len(src) - off
	}
	text := string(src[off : off+end])
	from := operatorAt(text, col-1)
	to := mutation(typ, from)
	if to == "?" {
		return nil, fmt.Errorf("no %s mutation of %q in %q", typ, from, text)
	}
	at := off + col - 1
	return slices.Concat(src[:at], []byte(to), src[at+len(from):]), nil
}

// goTest runs pkg's -short tests, with an overlay if one is given, and
// returns the mutant's status: LIVED if they pass, KILLED if a test fails,
// NOT VIABLE if the package does not build, TIMED OUT after timeout.
func goTest(ctx context.Context, pkg, overlay string, timeout time.Duration) (string, error) {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	args := []string{"test", "-short", "-count=1", "-failfast", "-timeout", (timeout + 30*time.Second).String()}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	mf, err := modFlags(pkg)
	if err != nil {
		return "", err
	}
	if mf != "" {
		args = append(args, mf)
	}
	dir, pattern := target(pkg)
	cmd := exec.CommandContext(tctx, "go", append(args, pattern)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	killGroup(cmd)
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case tctx.Err() != nil:
		return timedOut, nil
	case err == nil:
		return lived, nil
	case strings.Contains(out.String(), "[build failed]") || strings.Contains(out.String(), "[setup failed]"):
		return notViable, nil
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return killed, nil
	}
	return "", err
}

// rerunnable reports whether mutate runs again a mutant gremlins gave status.
func rerunnable(status string) bool { return status == notCovered || status == timedOut }
