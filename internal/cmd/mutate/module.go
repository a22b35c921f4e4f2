package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// A package directory holding a go.mod of its own (redis/) is a nested
// module: gremlins and go test run in it on ".", and its go.mod's relative
// replace of the root module (=> ../) would point nowhere from the copy of
// the nested module gremlins mutates in, so they read, through -modfile, a
// copy of that go.mod whose relative replace paths are made absolute.

// target returns the directory to run go and gremlins in ("" for the
// module root) and the package pattern to give them.
func target(pkg string) (dir, pattern string) {
	if _, err := os.Stat(filepath.Join(pkg, "go.mod")); err == nil {
		return pkg, "."
	}
	return "", "./" + pkg
}

// modfiles caches modFlags' result per nested module; the files are under
// scratch, the run's temporary directory.
var (
	modfiles = map[string]string{}
	scratch  string
)

// modFlags returns the GOFLAGS to add for pkg: none in the root module,
// -modfile with absolute replace paths for a nested one.
func modFlags(pkg string) (string, error) {
	dir, _ := target(pkg)
	if dir == "" {
		return "", nil
	}
	if f, ok := modfiles[dir]; ok {
		return f, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	mod, err := os.ReadFile(filepath.Join(abs, "go.mod"))
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(string(mod), "\n") {
		if i := strings.Index(line, "=> ."); strings.HasPrefix(strings.TrimSpace(line), "replace ") && i >= 0 {
			rel := strings.TrimSpace(line[i+3:])
			line = line[:i+3] + filepath.Join(abs, rel) + "\n"
		}
		out.WriteString(line)
	}
	mdir, err := os.MkdirTemp(scratch, "modfile-")
	if err != nil {
		return "", err
	}
	sum, err := os.ReadFile(filepath.Join(abs, "go.sum"))
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(mdir, "go.sum"), sum, 0o644); err != nil {
		return "", err
	}
	mf := filepath.Join(mdir, "go.mod")
	if err := os.WriteFile(mf, out.Bytes(), 0o644); err != nil {
		return "", err
	}
	modfiles[dir] = "-modfile=" + mf
	return modfiles[dir], nil
}
