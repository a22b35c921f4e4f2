package main

import (
	"strings"
	"testing"
)

// TestFailedTests: a failed top-level test's output is found however far
// from the log's end it is; passing tests and subtests alone are not.
func TestFailedTests(t *testing.T) {
	log := strings.Split(`=== RUN   TestA
--- PASS: TestA (0.00s)
=== RUN   TestB
    b_test.go:9: the reason
=== RUN   TestB/sub
--- FAIL: TestB (0.01s)
    --- FAIL: TestB/sub (0.01s)
=== RUN   TestC
    c_test.go:3: noise
--- PASS: TestC (0.00s)
PASS`, "\n")
	got := failedTests(log, 40)
	if len(got) != 1 {
		t.Fatalf("found %d failures, want 1: %q", len(got), got)
	}
	if !strings.Contains(got[0], "the reason") || strings.Contains(got[0], "TestA") || strings.Contains(got[0], "noise") {
		t.Fatalf("failure's output %q", got[0])
	}
	if short := failedTests(log, 2); len(short) != 1 || strings.Count(short[0], "\n") != 2 {
		t.Fatalf("capped at 2 lines: %q", short)
	}
}
