package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// vetTargets are the GOOS/GOARCH pairs the module claims to build on, with
// the GOAMD64 levels that change which instructions amd64 code may use.
var vetTargets = [][]string{
	{"GOOS=linux", "GOARCH=amd64", "GOAMD64=v1"},
	{"GOOS=linux", "GOARCH=amd64", "GOAMD64=v3"},
	{"GOOS=linux", "GOARCH=arm64"},
	{"GOOS=linux", "GOARCH=386"},
	{"GOOS=linux", "GOARCH=arm"},
	{"GOOS=linux", "GOARCH=riscv64"},
	{"GOOS=linux", "GOARCH=ppc64le"},
	{"GOOS=linux", "GOARCH=s390x"},
	{"GOOS=linux", "GOARCH=loong64"},
	{"GOOS=linux", "GOARCH=mips64le"},
	{"GOOS=darwin", "GOARCH=amd64"},
	{"GOOS=darwin", "GOARCH=arm64"},
	{"GOOS=windows", "GOARCH=amd64"},
	{"GOOS=windows", "GOARCH=arm64"},
	{"GOOS=freebsd", "GOARCH=amd64"},
}

// A vetResult is go vet's verdict on one module, target and tag set.
type vetResult struct {
	mod          module
	Target, Tags string
	Err          error
	Time         time.Duration
}

// vetAll runs go vet (tests included) on every module for every target,
// with and without purego, two at a time, and returns the results in order.
func vetAll(mods []module) []vetResult {
	var jobs []vetResult
	// Every target once before any purego run, so that the two workers do
	// not compile the same standard library at once: the second pass finds
	// it in the build cache.
	for _, tags := range []string{"", "purego"} {
		for _, m := range mods {
			for _, t := range vetTargets {
				jobs = append(jobs, vetResult{mod: m, Target: strings.Join(t, " "), Tags: tags})
			}
		}
	}
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func(j *vetResult) {
			defer func() { <-sem; wg.Done() }()
			start := time.Now()
			env := append(append(os.Environ(), "CGO_ENABLED=0"), strings.Fields(j.Target)...)
			_, j.Err = goCmd(j.mod.Dir, env, "vet", "-tags", j.Tags, j.mod.Pattern)
			j.Time = time.Since(start)
		}(&jobs[i])
	}
	wg.Wait()
	return jobs
}

// printVet writes a table of the vet results and each failure's output,
// and reports whether all passed.
func printVet(w io.Writer, rs []vetResult) bool {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VET MODULE\tTARGET\tTAGS\tTIME\tRESULT")
	ok := true
	for _, r := range rs {
		verdict := "ok"
		if r.Err != nil {
			verdict, ok = "FAIL", false
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1fs\t%s\n", r.mod.Name, r.Target, r.Tags, r.Time.Seconds(), verdict)
	}
	tw.Flush()
	for _, r := range rs {
		if r.Err != nil {
			fmt.Fprintf(w, "FAIL vet %s %s %s:\n%v\n", r.mod.Name, r.Target, r.Tags, r.Err)
		}
	}
	return ok
}
