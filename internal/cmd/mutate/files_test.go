package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestChunks: a package run in two chunks of its files (-files) adds up
// to the results of both, the row naming the files neither ran until the
// second; a chunk that did not finish leaves the earlier results as they
// were.
func TestChunks(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	pkg, work := "p", filepath.Join(dir, "work")
	for _, f := range []string{"p/a.go", "p/b.go", "p/c.go", "p/a_test.go", "p/sub/d.go"} {
		os.MkdirAll(filepath.Dir(f), 0o755)
		if err := os.WriteFile(f, []byte("package p\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(work, 0o755)
	names, err := sourceFiles(pkg)
	if err != nil || !slices.Equal(names, []string{"a.go", "b.go", "c.go"}) {
		t.Fatalf("sourceFiles: %v %v", names, err)
	}
	if args, _ := excludeArgs(pkg, regexp.MustCompile(`^a\.go$`)); !slices.Equal(args, []string{"--exclude-files", `^b\.go$`, "--exclude-files", `^c\.go$`}) {
		t.Fatalf("excludeArgs: %q", args)
	}
	// chunk writes what a finished run of gremlins and the re-runs leaves
	// for the files (one mutant each), then merges as unleash does.
	chunk := func(re string, secs float64, complete bool, files ...string) runInfo {
		t.Helper()
		before, err := readEarlier(pkg, work)
		if err != nil {
			t.Fatal(err)
		}
		var res gremlinsResult
		rerun := map[string]string{}
		for _, f := range files {
			b := []byte(`{"files":[{"file_name":"` + f + `","mutations":[{"type":"ARITHMETIC_BASE","status":"NOT COVERED","line":1,"column":1}]}]}`)
			var one gremlinsResult
			json.Unmarshal(b, &one)
			res.Files = append(res.Files, one.Files...)
			rerun[rerunKey("p/"+f, 1, 1, "ARITHMETIC_BASE")] = "KILLED"
		}
		info := runInfo{Pkg: pkg, Seconds: secs, Complete: complete}
		if complete {
			writeJSON(filepath.Join(work, "p.json"), res)
			writeJSON(filepath.Join(work, "p.rerun.json"), rerun)
		} else {
			os.Remove(filepath.Join(work, "p.json"))
		}
		writeJSON(filepath.Join(work, "p.run.json"), info)
		if !complete {
			if err := before.restore(pkg, work); err != nil {
				t.Fatal(err)
			}
		} else if err := before.merge(pkg, work, regexp.MustCompile(re), &info); err != nil {
			t.Fatal(err)
		} else {
			writeJSON(filepath.Join(work, "p.run.json"), info)
		}
		res, info, ok, err := loadResult(pkg, work)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		return info
	}
	files := func() []string {
		res, _, _, _ := loadResult(pkg, work)
		var fs []string
		for _, f := range res.Files {
			if f.Mutations[0].Status != "KILLED" || !f.Mutations[0].rerun {
				t.Errorf("%s: %+v, want the re-run's KILLED", f.Filename, f.Mutations[0])
			}
			fs = append(fs, f.Filename)
		}
		slices.Sort(fs)
		return fs
	}
	info := chunk(`^a\.go$`, 10, true, "a.go")
	if !slices.Equal(info.Remaining, []string{"b.go", "c.go"}) || info.Seconds != 10 || info.Rerun != 1 || !slices.Equal(files(), []string{"a.go"}) {
		t.Fatalf("first chunk: %+v %v", info, files())
	}
	info = chunk(`^b\.go$`, 5, false, "b.go")
	if !slices.Equal(info.Remaining, []string{"b.go", "c.go"}) || info.Seconds != 10 || !slices.Equal(files(), []string{"a.go"}) {
		t.Fatalf("unfinished chunk: %+v %v", info, files())
	}
	info = chunk(`^(b|c)\.go$`, 7, true, "b.go", "c.go")
	if len(info.Remaining) != 0 || info.Seconds != 17 || info.Rerun != 3 || !slices.Equal(files(), []string{"a.go", "b.go", "c.go"}) {
		t.Fatalf("second chunk: %+v %v", info, files())
	}
	// A chunk again over a file run before replaces its results; a file
	// added since no chunk ran is not run yet.
	os.WriteFile("p/e.go", []byte("package p\n"), 0o644)
	info = chunk(`^a\.go$`, 1, true, "a.go")
	if !slices.Equal(info.Remaining, []string{"e.go"}) || info.Seconds != 18 || info.Rerun != 3 || !slices.Equal(files(), []string{"a.go", "b.go", "c.go"}) {
		t.Fatalf("a chunk again: %+v %v", info, files())
	}
}

// TestResumable: a resumed run keeps the re-run statuses it need not
// repeat and runs the mutants that lived again.
func TestResumable(t *testing.T) {
	got, err := resumable([]byte(`{"p/a.go:1:2:X": "KILLED", "p/a.go:3:4:Y": "LIVED", "p/a.go:5:6:Z": "TIMED OUT", "p/a.go:7:8:W": "NOT VIABLE"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"p/a.go:1:2:X": "KILLED", "p/a.go:5:6:Z": "TIMED OUT", "p/a.go:7:8:W": "NOT VIABLE"}
	if !maps.Equal(got, want) {
		t.Fatalf("resumable: %v, want %v", got, want)
	}
	if _, err := resumable([]byte("{")); err == nil {
		t.Fatal("resumable of a truncated file: no error")
	}
}
