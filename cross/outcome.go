package main

import (
	"bufio"
	"fmt"
	"strings"
)

// An outcome is what one test binary's run showed.
type outcome struct {
	Passed, Failed, Skipped int // tests, subtests and examples, from -test.v
	Race                    bool
	Exit                    int // -1: it did not start, was killed, or did not report
	Note                    string
}

// parseOutcome reads the -test.v output of a test binary that exited with
// code exit.
func parseOutcome(output string, exit int) outcome {
	o := outcome{Exit: exit}
	sc := bufio.NewScanner(strings.NewReader(output))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(l, "--- PASS:"):
			o.Passed++
		case strings.HasPrefix(l, "--- FAIL:"):
			o.Failed++
		case strings.HasPrefix(l, "--- SKIP:"):
			o.Skipped++
		case strings.Contains(l, "WARNING: DATA RACE"):
			o.Race = true
		}
	}
	return o
}

// ok reports whether the run passed: exit 0, no failed test, no race.
func (o outcome) ok() bool { return o.Exit == 0 && o.Failed == 0 && !o.Race }

// problem says why the run failed, for the report.
func (o outcome) problem() string {
	var p []string
	if o.Race {
		p = append(p, "DATA RACE")
	}
	if o.Failed > 0 {
		p = append(p, fmt.Sprintf("%d failed", o.Failed))
	}
	if o.Exit != 0 {
		p = append(p, fmt.Sprintf("exit %d", o.Exit))
	}
	if o.Note != "" {
		p = append(p, o.Note)
	}
	return strings.Join(p, ", ")
}
