package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// A pkgResult is one test binary's run in one row.
type pkgResult struct {
	ImportPath string
	outcome
	Log  string
	Time time.Duration
}

// A rowResult is what one row of the matrix showed.
type rowResult struct {
	row
	Path     string // what the probe printed
	Pkgs     []pkgResult
	Build    time.Duration
	Run      time.Duration
	Problems []string
}

func (r *rowResult) fail(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// addPkg records a package's outcome and run time, saves its output as a
// log, and reports progress.
func (r *rowResult) addPkg(o *options, importPath string, oc outcome, out []byte, d time.Duration) {
	log, err := writeLog(o, r.row, importPath, out)
	if err != nil {
		r.fail("%s: %v", importPath, err)
	}
	r.Pkgs = append(r.Pkgs, pkgResult{ImportPath: importPath, outcome: oc, Log: log, Time: d})
	verdict := "ok"
	if !oc.ok() {
		verdict = oc.problem()
		r.fail("%s: %s (log: %s)", importPath, verdict, log)
	}
	fmt.Fprintf(os.Stderr, "cross:   %s %s: %d passed, %.1fs, %s\n", r.Name, importPath, oc.Passed, d.Seconds(), verdict)
}

// checkPath is the required-path check.
func (r *rowResult) checkPath() {
	if r.Path != r.Expect {
		r.fail("path: atomic128 selected %q, want %q on %s %s", r.Path, r.Expect, r.target(), r.cpu())
	}
}

func (r *rowResult) ok() bool { return len(r.Problems) == 0 }

func (r *rowResult) tests() (passed, total int) {
	for _, p := range r.Pkgs {
		passed += p.Passed
		total += p.Passed + p.Failed
	}
	return
}

// printTable writes the matrix's table and then the problems of each row
// that failed.
func printTable(w io.Writer, results []*rowResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ROW\tTARGET\tRUNNER\tCPU MODEL\tPATH SELECTED\tRACE\tTESTS PASSED\tTIME (BUILD)\tRESULT")
	for _, r := range results {
		path := r.Path
		if r.Path != r.Expect {
			path = fmt.Sprintf("%s (want %s)", r.Path, r.Expect)
		}
		race := "off"
		if r.Race {
			race = "on"
		}
		passed, total := r.tests()
		verdict := "ok"
		if !r.ok() {
			verdict = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d/%d in %d pkgs\t%.1fs (%.1fs)\t%s\n",
			r.Name, r.target(), r.Runner, r.cpu(), path, race, passed, total, len(r.Pkgs),
			(r.Build + r.Run).Seconds(), r.Build.Seconds(), verdict)
	}
	tw.Flush()
	for _, r := range results {
		for _, p := range r.Problems {
			fmt.Fprintf(w, "FAIL %s: %s\n", r.Name, p)
		}
	}
}

// printFailedLogs writes the tail of the log of every package that failed.
func printFailedLogs(w io.Writer, results []*rowResult, lines int) {
	for _, r := range results {
		for _, p := range r.Pkgs {
			if p.ok() {
				continue
			}
			b, err := os.ReadFile(p.Log)
			if err != nil || len(bytes.TrimSpace(b)) == 0 {
				continue
			}
			l := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
			for _, f := range failedTests(l, lines) {
				fmt.Fprintf(w, "\n--- %s %s: %s\n", r.Name, p.ImportPath, f)
			}
			l = l[max(0, len(l)-lines):]
			fmt.Fprintf(w, "\n--- %s %s (last %d lines of %s)\n%s\n", r.Name, p.ImportPath, len(l), p.Log, strings.Join(l, "\n"))
		}
	}
}

// failedTests returns, for each top-level test of a -test.v log that
// failed, its output from "=== RUN" to its verdict (at most lines of it),
// so a failure far from the log's end still shows.
func failedTests(log []string, lines int) []string {
	var out []string
	start := map[string]int{}
	for i, line := range log {
		if name, ok := strings.CutPrefix(line, "=== RUN   "); ok && !strings.Contains(name, "/") {
			start[name] = i
		}
		rest, ok := strings.CutPrefix(line, "--- FAIL: ")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, " ")
		from, ok := start[name]
		if !ok {
			continue
		}
		chunk := log[from : i+1]
		if len(chunk) > lines {
			chunk = append(append([]string{}, chunk[:lines/2]...), append([]string{"..."}, chunk[len(chunk)-lines/2:]...)...)
		}
		out = append(out, strings.Join(chunk, "\n"))
	}
	return out
}

// writeJSON saves the results for programs, such as the harness's self-test.
func writeJSON(file string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// logFile is the path of the log of importPath's run in row r, in a
// directory that exists.
func logFile(o *options, r row, importPath string) string {
	name := strings.NewReplacer("/", "_", ".", "_").Replace(importPath)
	p := filepath.Join(o.work, "logs", r.Name, name+".log")
	os.MkdirAll(filepath.Dir(p), 0o755) // an error shows when the log is written
	return p
}

// writeLog saves the output of importPath's run in row r and returns the
// log's path.
func writeLog(o *options, r row, importPath string, out []byte) (string, error) {
	p := logFile(o, r, importPath)
	return p, os.WriteFile(p, out, 0o644)
}
