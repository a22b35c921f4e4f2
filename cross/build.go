package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// A module names packages to test: a module directory and a go list pattern.
type module struct {
	Name    string // the directory as given, for the tables
	Dir     string
	Pattern string
}

// parseModule reads "dir" or "dir:pattern"; the pattern defaults to ./... .
func parseModule(s string) module {
	dir, pat, ok := strings.Cut(s, ":")
	if !ok || pat == "" {
		pat = "./..."
	}
	return module{Name: dir, Dir: dir, Pattern: pat}
}

// A pkg is one package with tests, and its test binary once built.
type pkg struct {
	ImportPath string
	Dir        string // source directory: the binary runs there, for testdata
	Binary     string
}

// buildEnv is the environment that builds for r.
func buildEnv(r row) []string {
	// The race detector needs cgo; everything else builds static.
	cgo := "CGO_ENABLED=0"
	if r.Race {
		cgo = "CGO_ENABLED=1"
	}
	env := append(os.Environ(), "GOOS=linux", "GOARCH="+r.GOARCH, cgo)
	if r.Race && r.GOARCH == "arm64" {
		env = append(env, "CC=aarch64-linux-gnu-gcc")
	}
	return env
}

// buildFlags are the go build flags for r.
func buildFlags(r row) []string {
	var f []string
	if r.Race {
		f = append(f, "-race")
	}
	if r.Tags != "" {
		f = append(f, "-tags", r.Tags)
	}
	return f
}

// goCmd runs the go command in dir with env and returns its stdout; a failure
// carries its stderr.
func goCmd(dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, stderr.Bytes())
	}
	return out, nil
}

// listTested returns the packages of m that have tests when built for r.
func listTested(r row, m module) ([]pkg, error) {
	args := append([]string{"list"}, buildFlags(r)...)
	args = append(args, "-f", "{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}\t{{.Dir}}{{end}}", m.Pattern)
	out, err := goCmd(m.Dir, buildEnv(r), args...)
	if err != nil {
		return nil, err
	}
	var pkgs []pkg
	for _, l := range strings.Split(string(out), "\n") {
		if ip, dir, ok := strings.Cut(l, "\t"); ok {
			pkgs = append(pkgs, pkg{ImportPath: ip, Dir: dir})
		}
	}
	return pkgs, nil
}

// buildTests builds a test binary for every package of every module into
// out, and returns the packages with their binaries.
func buildTests(r row, mods []module, out string) ([]pkg, error) {
	var all []pkg
	for mi, m := range mods {
		pkgs, err := listTested(r, m)
		if err != nil {
			return nil, err
		}
		// go test -c -o dir/ names each binary after the last element of
		// the import path, so packages whose names collide go in separate
		// invocations.
		for gi, group := range byUniqueBase(pkgs) {
			dir := filepath.Join(out, fmt.Sprintf("m%d-g%d", mi, gi)) + string(filepath.Separator)
			args := append([]string{"test", "-c", "-o", dir}, buildFlags(r)...)
			for _, p := range group {
				args = append(args, p.ImportPath)
			}
			if _, err := goCmd(m.Dir, buildEnv(r), args...); err != nil {
				return nil, err
			}
			for _, p := range group {
				p.Binary = filepath.Join(dir, path.Base(p.ImportPath)+".test")
				all = append(all, p)
			}
		}
	}
	return all, nil
}

// byUniqueBase splits pkgs into groups in which no two import paths share a
// last element, keeping their order.
func byUniqueBase(pkgs []pkg) [][]pkg {
	var groups [][]pkg
	var seen []map[string]bool
	for _, p := range pkgs {
		b := path.Base(p.ImportPath)
		i := 0
		for i < len(groups) && seen[i][b] {
			i++
		}
		if i == len(groups) {
			groups = append(groups, nil)
			seen = append(seen, map[string]bool{})
		}
		groups[i] = append(groups[i], p)
		seen[i][b] = true
	}
	return groups
}

// buildProbe builds the path probe for r from the cross module in dir (it
// imports atomic128 from the main module, with the row's flags).
func buildProbe(r row, dir, out string) (string, error) {
	bin := filepath.Join(out, "pathprobe")
	args := append([]string{"build", "-o", bin}, buildFlags(r)...)
	_, err := goCmd(dir, buildEnv(r), append(args, "./pathprobe")...)
	return bin, err
}
