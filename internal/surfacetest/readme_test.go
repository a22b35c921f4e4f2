package surfacetest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeImports are the packages the README's Go blocks may name, by the
// name they are used with.
var readmeImports = map[string]string{
	"context": "context", "time": "time", "http": "net/http", "netip": "net/netip",
}

// readmeFree are the variables the README's blocks use without declaring
// them: the parameters of the function each block is compiled in (and
// client, a go-redis client, in the redis module).
const readmeFree = `ctx context.Context, now int64, mux *http.ServeMux, apiKey, userID string`

// TestREADMEBlocks compiles each Go block of README.md as printed, as the
// body of a function that has the variables the blocks leave to the reader
// (now, mux, apiKey, ...) and imports what the block names: a quick start
// that no longer compiles, or names an identifier that moved, fails here.
// Only "declared and not used" is forgiven, as a block shows calls, not
// what is done with their results. Blocks that name the redis module
// compile in it.
func TestREADMEBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Skip("no README.md here (a test VM holds testdata only)")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	blocks := regexp.MustCompile("(?ms)^```go\n(.*?)^```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 4 {
		t.Fatalf("found %d Go blocks in README.md, want the 4 quick starts at least", len(blocks))
	}
	var main, redis []string
	for i, b := range blocks {
		body := b[1]
		if strings.Contains(body, "redis.") {
			redis = append(redis, readmeFunc(i, body, ", client redis.Client"))
		} else {
			main = append(main, readmeFunc(i, body, ""))
		}
	}
	dir := t.TempDir()
	build := func(module, pkg string, funcs []string) {
		if len(funcs) == 0 {
			return
		}
		src := "package readme\n\n" + readmeImportBlock(strings.Join(funcs, "\n")) + strings.Join(funcs, "\n")
		file := filepath.Join(dir, filepath.Base(module)+".go")
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(module, pkg, "readme.go"): file}})
		ov := filepath.Join(dir, filepath.Base(module)+".json")
		if err := os.WriteFile(ov, overlay, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(goCmd, "build", "-gcflags=-e", "-overlay", ov, "./"+pkg)
		cmd.Dir = module
		out, err := cmd.CombinedOutput()
		if err == nil {
			return
		}
		var errs []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if !strings.HasPrefix(line, "#") && !strings.Contains(line, "declared and not used") {
				errs = append(errs, line)
			}
		}
		if len(errs) > 0 {
			t.Errorf("README.md's Go blocks do not compile in %s:\n%s\n\n%s", module, strings.Join(errs, "\n"), src)
		}
	}
	build(root, "internal/surfacetest/testdata/readme", main)
	build(filepath.Join(root, "redis"), "internal/readme", redis)
}

// readmeFunc wraps block i in a function, with readmeFree and more
// parameters.
func readmeFunc(i int, block, more string) string {
	return fmt.Sprintf("func block%d(%s%s) error {\n%s\treturn nil\n}\n", i, readmeFree, more, block)
}

// readmeImportBlock imports what the functions name: cellrate's packages
// by their name, and readmeImports.
func readmeImportBlock(src string) string {
	var paths []string
	code := regexp.MustCompile(`//[^\n]*`).ReplaceAllString(src, "") // comments name packages too
	for _, m := range regexp.MustCompile(`\b([a-z][a-z0-9]*)\.[A-Z]`).FindAllStringSubmatch(code, -1) {
		path, ok := readmeImports[m[1]]
		if !ok {
			path = "github.com/cellrate/cellrate/" + m[1]
			if m[1] == "clientkey" {
				path = "github.com/cellrate/cellrate/httplimit/clientkey"
			}
			if _, err := os.Stat(filepath.Join("..", "..", strings.TrimPrefix(path, "github.com/cellrate/cellrate/"))); err != nil {
				continue // a method call on a variable (l.Allow), not a package
			}
		}
		if !slices.Contains(paths, path) {
			paths = append(paths, path)
		}
	}
	for _, p := range []string{"context", "net/http"} {
		if !slices.Contains(paths, p) {
			paths = append(paths, p) // the parameters' types
		}
	}
	slices.Sort(paths)
	var b strings.Builder
	b.WriteString("import (\n")
	for _, p := range paths {
		fmt.Fprintf(&b, "\t%q\n", p)
	}
	b.WriteString(")\n\n")
	return b.String()
}

// TestREADMEExamples: the README's Examples section links each user
// package that has runnable examples to its docs, and every Example it
// names exists in the package it is named under.
func TestREADMEExamples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Skip("no README.md here (a test VM holds testdata only)")
	}
	_, section, _ := strings.Cut(string(readme), "\n## Examples\n")
	section, _, _ = strings.Cut(section, "\n## ")
	link := regexp.MustCompile(`\]\(https://pkg\.go\.dev/github\.com/cellrate/cellrate/([a-z0-9/]+)#pkg-examples\)`)
	named := regexp.MustCompile("`(Example\\w*)`")
	links := link.FindAllStringSubmatchIndex(section, -1)
	linked := map[string]bool{}
	for i, l := range links {
		pkg := section[l[2]:l[3]]
		linked[pkg] = true
		end := len(section)
		if i+1 < len(links) {
			end = links[i+1][0]
		}
		src := testSources(t, filepath.Join("..", "..", pkg))
		for _, m := range named.FindAllStringSubmatch(section[l[1]:end], -1) {
			if !strings.Contains(src, "func "+m[1]+"()") {
				t.Errorf("README names %s under %s, which has no such Example", m[1], pkg)
			}
		}
	}
	for _, pkg := range userPackages {
		if strings.Contains(testSources(t, filepath.Join("..", "..", pkg)), "\nfunc Example") && !linked[pkg] {
			t.Errorf("%s has Examples, and the README's Examples section does not link them", pkg)
		}
	}
}

// testSources returns the test files of the package in dir, one after
// another.
func testSources(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(src)
	}
	return b.String()
}

// TestREADMEMakeTargets: the README's "Make targets" block is what make
// help prints, the Makefile's targets with their "## " descriptions in
// order, so a target added or reworded shows in the README too.
func TestREADMEMakeTargets(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Skip("no README.md here (a test VM holds testdata only)")
	}
	makefile, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Skip("no Makefile here")
	}
	var want strings.Builder
	target := regexp.MustCompile(`(?m)^([a-z-]+):.*?## (.*)$`)
	for _, m := range target.FindAllStringSubmatch(string(makefile), -1) {
		want.WriteString(m[1] + "\t" + m[2] + "\n")
	}
	_, section, ok := strings.Cut(string(readme), "\n## Make targets\n")
	if !ok {
		t.Fatal("README.md has no Make targets section")
	}
	_, block, _ := strings.Cut(section, "```\n")
	block, _, _ = strings.Cut(block, "```\n")
	if block != want.String() {
		t.Fatalf("README.md's Make targets block:\n%s\nmake help prints:\n%s", block, want.String())
	}
}
