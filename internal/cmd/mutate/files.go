package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// A package whose tests are slow (redis/, on real servers) can be run in
// chunks of its files: -files (MUTATE_FILES) names the files to mutate this
// time by a regexp on their names, and the results of the package's other
// files from earlier runs in -work are kept, so that chunks add up to the
// package's row; the row says which files no run covered yet.

// sourceFiles returns the names of pkg's non-test Go files (not those of
// its subdirectories).
func sourceFiles(pkg string) ([]string, error) {
	ents, err := os.ReadDir(pkg)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			names = append(names, n)
		}
	}
	return names, nil
}

// excludeArgs returns gremlins' arguments that leave out pkg's files whose
// names files does not match (none when files is nil).
func excludeArgs(pkg string, files *regexp.Regexp) ([]string, error) {
	if files == nil {
		return nil, nil
	}
	names, err := sourceFiles(pkg)
	if err != nil {
		return nil, err
	}
	var args []string
	for _, n := range names {
		if !files.MatchString(n) {
			args = append(args, "--exclude-files", "^"+regexp.QuoteMeta(n)+"$")
		}
	}
	return args, nil
}

// chunkBase is what a package's earlier runs in work left: gremlins' results,
// mutate's re-runs and the run's record, read before a chunk replaces them.
type chunkBase struct {
	res   gremlinsResult
	rerun map[string]string
	info  runInfo
	ok    bool // a complete earlier run left results
}

// readEarlier reads pkg's results in work, if a complete run left them.
func readEarlier(pkg, work string) (chunkBase, error) {
	var e chunkBase
	if _, err := os.Stat(filepath.Join(work, resultName(pkg)+".json")); errors.Is(err, os.ErrNotExist) {
		return e, nil // none, or a run under way removed them
	}
	res, info, ok, err := loadGremlins(pkg, work)
	if err != nil || !ok || !info.Complete {
		return e, err
	}
	e.res, e.info, e.ok = res, info, true
	b, err := os.ReadFile(filepath.Join(work, resultName(pkg)+".rerun.json"))
	if errors.Is(err, os.ErrNotExist) {
		return e, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &e.rerun)
	}
	return e, err
}

// merge writes into work's results of pkg, just written by a chunk of the
// files files matches, the earlier results of pkg's other files, and
// records in info the time of both and the files no run has covered.
func (e chunkBase) merge(pkg, work string, files *regexp.Regexp, info *runInfo) error {
	names, err := sourceFiles(pkg)
	if err != nil {
		return err
	}
	name := resultName(pkg)
	var res gremlinsResult
	if err := readJSON(filepath.Join(work, name+".json"), &res); err != nil {
		return err
	}
	rerun := map[string]string{}
	if err := readJSON(filepath.Join(work, name+".rerun.json"), &rerun); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if e.ok {
		for _, f := range e.res.Files {
			if !files.MatchString(f.Filename) {
				res.Files = append(res.Files, f)
			}
		}
		for k, st := range e.rerun {
			if !files.MatchString(filepath.Base(strings.SplitN(k, ":", 2)[0])) {
				rerun[k] = st
			}
		}
		info.Seconds += e.info.Seconds
	}
	for _, n := range names {
		if !files.MatchString(n) && (!e.ok || slices.Contains(e.info.Remaining, n)) {
			info.Remaining = append(info.Remaining, n)
		}
	}
	info.Rerun = len(rerun)
	if err := writeJSON(filepath.Join(work, name+".json"), res); err != nil {
		return err
	}
	return writeJSON(filepath.Join(work, name+".rerun.json"), rerun)
}

func readJSON(file string, v any) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func writeJSON(file string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// restore writes the earlier results back, for a chunk that did not finish.
func (e chunkBase) restore(pkg, work string) error {
	name := resultName(pkg)
	if err := writeJSON(filepath.Join(work, name+".json"), e.res); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(work, name+".rerun.json"), e.rerun); err != nil {
		return err
	}
	return writeJSON(filepath.Join(work, name+".run.json"), e.info)
}
