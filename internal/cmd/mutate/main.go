// Command mutate is `make mutate`: mutation testing of the decision and cell
// packages with gremlins (github.com/go-gremlins/gremlins, pinned), one
// package at a time, and the table and survivor list in MUTANTS.md.
//
// For each package it runs `gremlins unleash` with the settings in
// .gremlins.yaml (every mutant type, one worker, a timeout of a few times the
// package's own test time) and GOFLAGS="-short -count=1", so each mutant is
// judged by that package's -short tests, never a cached result. A package
// gets at most -budget of wall time; gremlins and its `go test` children are
// killed after that and the package is marked incomplete. Results go to
// -work (default .mutate/, not committed).
//
// It then rewrites the part of MUTANTS.md between the "mutate:begin" and
// "mutate:end" markers: one row per package (rows of packages not run this
// time are kept), and every mutant that survived (LIVED) or that no test
// reached (NOT COVERED), each with the explanation found for it in the
// hand-written "Equivalent mutants" table of MUTANTS.md, matched by file,
// mutation and the text of the source line (not the line number, so that
// edits elsewhere in the file keep the match). It exits 1 when a survivor
// has no explanation, printing the row to add; it exits 2 when it could not
// run.
//
// Usage, from the module root:
//
//	go run ./internal/cmd/mutate [-pkgs "atomic128 nanotime"] [-budget 20m]
//	    [-md MUTANTS.md] [-work .mutate] [-report] [-resume]
//
// -report only rewrites MUTANTS.md from the results already in -work.
// -resume keeps, for a package whose gremlins run finished, its results and
// the mutants already run again (mutate saves each as it goes), and runs
// only the rest, within a new budget: for a run stopped at its budget. It
// also runs again the mutants that lived, so that tests added since count.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
)

// gremlinsPkg is the pinned mutation tester (on the Go module proxy).
const gremlinsPkg = "github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0"

// defaultPkgs are the decision and cell packages.
const defaultPkgs = "gcra internal/gcrastep internal/bucketcore window internal/packed64core striped atomic128 internal/slide internal/cell internal/backoff nanotime"

func main() {
	pkgs := flag.String("pkgs", defaultPkgs, "packages to mutate, space- or comma-separated, relative to the module root")
	budget := flag.Duration("budget", 20*time.Minute, "wall time limit per package")
	md := flag.String("md", "MUTANTS.md", "the file whose generated section is rewritten")
	work := flag.String("work", ".mutate", "directory for gremlins, its results and logs")
	reportOnly := flag.Bool("report", false, "only rewrite -md from the results in -work")
	resume := flag.Bool("resume", false, "keep finished gremlins runs and re-runs in -work; run only what is missing")
	filesRE := flag.String("files", "", "only mutate the files whose names match this regexp, keeping the results of the others from earlier runs")
	flag.Parse()
	if *filesRE != "" {
		re, err := regexp.Compile(*filesRE)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mutate: -files:", err)
			os.Exit(2)
		}
		files = re
	}

	list := strings.FieldsFunc(*pkgs, func(r rune) bool { return r == ' ' || r == ',' })
	// gremlins runs in a process group of its own (killed as a whole at the
	// budget), which an interrupt at the terminal does not reach: pass it on.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, list, *budget, *md, *work, *reportOnly, *resume); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		var u unexplainedError
		if errors.As(err, &u) {
			os.Exit(1)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, pkgs []string, budget time.Duration, md, work string, reportOnly, resume bool) error {
	work, err := filepath.Abs(work)
	if err != nil {
		return err
	}
	if !reportOnly {
		if err := os.MkdirAll(work, 0o755); err != nil {
			return err
		}
		// gremlins copies the whole module for its mutants: its binary and
		// temporary files live outside the module.
		tmp, err := os.MkdirTemp("", "cellrate-mutate-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		scratch = tmp
		bin, err := installGremlins(tmp)
		if err != nil {
			return err
		}
		for _, pkg := range pkgs {
			if err := unleash(ctx, bin, pkg, budget, work, tmp, resume); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted; MUTANTS.md not rewritten")
			}
		}
	}
	return report(pkgs, md, work)
}

// installGremlins builds the pinned gremlins into dir/bin.
func installGremlins(dir string) (string, error) {
	cmd := exec.Command("go", "install", gremlinsPkg)
	cmd.Env = append(os.Environ(), "GOBIN="+filepath.Join(dir, "bin"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go install %s: %w", gremlinsPkg, err)
	}
	return filepath.Join(dir, "bin", "gremlins"), nil
}

// files is -files: the files to mutate (nil: all of the package's).
var files *regexp.Regexp

// runInfo is what mutate records of a package's run beside gremlins' output.
type runInfo struct {
	Pkg      string
	Seconds  float64
	Complete bool   // gremlins and the re-runs finished within the budget
	Error    string // why not, if they did not
	Rerun    int    // mutants gremlins called not covered or timed out, run again by mutate
	At       string // when the run ended (UTC)
	// Remaining are the package's files no run mutated yet (see -files).
	Remaining []string `json:",omitempty"`
}

func resultName(pkg string) string { return strings.ReplaceAll(pkg, "/", "_") }

// unleash runs gremlins on one package within budget and records the run
// in work; gremlins' copies of the module go under tmpRoot. With resume, a
// finished gremlins run in work is kept, with the re-runs already made.
func unleash(parent context.Context, bin, pkg string, budget time.Duration, work, tmpRoot string, resume bool) (err error) {
	name := resultName(pkg)
	out := filepath.Join(work, name+".json")
	rerunFile := filepath.Join(work, name+".rerun.json")
	earlier, kept := 0.0, false
	if resume {
		earlier, kept = finishedRun(work, name)
	}
	var before chunkBase
	if files != nil && !kept {
		if before, err = readEarlier(pkg, work); err != nil {
			return err
		}
	}
	excl, err := excludeArgs(pkg, files)
	if err != nil {
		return err
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if !kept {
		_ = os.Remove(out)
		_ = os.Remove(rerunFile)
		flags |= os.O_TRUNC
	}
	logf, err := os.OpenFile(filepath.Join(work, name+".log"), flags, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	tmp, err := os.MkdirTemp(tmpRoot, "tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	ctx, cancel := context.WithTimeout(parent, budget)
	defer cancel()
	config, err := filepath.Abs(".gremlins.yaml")
	if err != nil {
		return err
	}
	mf, err := modFlags(pkg)
	if err != nil {
		return err
	}
	dir, pattern := target(pkg)
	// Subdirectories are packages of their own, with rows of their own.
	args := append([]string{"unleash", "--config", config, "--exclude-files", "/"}, excl...)
	cmd := exec.CommandContext(ctx, bin, append(args, "-o", out, pattern)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -short -count=1 "+mf),
		"TMPDIR="+tmp, // gremlins' copies of the module, removed after the run
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	killGroup(cmd)

	fmt.Fprintf(os.Stderr, "mutate: %s (log in %s) ... ", pkg, logf.Name())
	start := time.Now()
	if !kept {
		err = cmd.Run()
	}
	info := runInfo{Pkg: pkg, Complete: err == nil, At: time.Now().UTC().Format(time.DateTime)}
	switch {
	case parent.Err() != nil:
		info.Error = "interrupted"
	case ctx.Err() != nil:
		info.Error = fmt.Sprintf("stopped at the %v budget", budget)
	case err != nil:
		info.Error = err.Error()
	}
	if info.Complete {
		info.Rerun, err = rerunGremlins(ctx, pkg, out, rerunFile, tmp, kept)
		if err != nil {
			info.Complete = false
			info.Error = "re-running mutants: " + err.Error()
			if ctx.Err() != nil {
				info.Error = fmt.Sprintf("stopped at the %v budget while re-running mutants", budget)
			}
		}
	}
	info.Seconds = earlier + time.Since(start).Seconds()
	if files != nil && !kept && !info.Complete && before.ok {
		fmt.Fprintf(os.Stderr, "mutate: %s: the chunk did not finish; the earlier results are kept\n", pkg)
		return before.restore(pkg, work)
	}
	if files != nil && !kept && info.Complete {
		if err := before.merge(pkg, work, files, &info); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "%.0f s, %d re-run %s\n", info.Seconds, info.Rerun, info.Error)
	b, _ := json.MarshalIndent(info, "", "  ")
	return os.WriteFile(filepath.Join(work, name+".run.json"), b, 0o644)
}

// finishedRun reports whether work holds a finished gremlins run of the
// package named name, and the seconds its runs took so far.
func finishedRun(work, name string) (float64, bool) {
	b, err := os.ReadFile(filepath.Join(work, name+".run.json"))
	if err != nil {
		return 0, false
	}
	var info runInfo
	if json.Unmarshal(b, &info) != nil {
		return 0, false
	}
	if _, err := os.Stat(filepath.Join(work, name+".json")); err != nil {
		return 0, false // gremlins writes its results only when it finishes
	}
	return info.Seconds, true
}

// gremlinsResult is the part of gremlins' -o output mutate reads.
type gremlinsResult struct {
	Files []struct {
		Filename  string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
			rerun  bool   // run again by mutate
		} `json:"mutations"`
	} `json:"files"`
}

// loadResult reads a package's results from work, with the statuses of the
// mutants mutate re-ran written into them; ok is false if it has none.
func loadResult(pkg, work string) (res gremlinsResult, info runInfo, ok bool, err error) {
	res, info, ok, err = loadGremlins(pkg, work)
	if !ok || err != nil {
		return res, info, ok, err
	}
	b, err := os.ReadFile(filepath.Join(work, resultName(pkg)+".rerun.json"))
	if errors.Is(err, os.ErrNotExist) {
		return res, info, true, nil
	}
	var rerun map[string]string
	if err == nil {
		err = json.Unmarshal(b, &rerun)
	}
	if err != nil {
		return res, info, false, err
	}
	for _, f := range res.Files {
		file := filepath.ToSlash(filepath.Join(pkg, f.Filename))
		for i, g := range f.Mutations {
			if st, ok := rerun[rerunKey(file, g.Line, g.Column, g.Type)]; ok {
				f.Mutations[i].Status = st
				f.Mutations[i].rerun = true
			}
		}
	}
	return res, info, true, nil
}

func loadGremlins(pkg, work string) (res gremlinsResult, info runInfo, ok bool, err error) {
	name := resultName(pkg)
	b, err := os.ReadFile(filepath.Join(work, name+".run.json"))
	if errors.Is(err, os.ErrNotExist) {
		return res, info, false, nil
	}
	if err != nil {
		return res, info, false, err
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return res, info, false, err
	}
	b, err = os.ReadFile(filepath.Join(work, name+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return res, info, true, nil // the run did not finish: no results
	}
	if err != nil {
		return res, info, false, err
	}
	return res, info, true, json.Unmarshal(b, &res)
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
