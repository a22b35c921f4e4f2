package main

import "testing"

func TestParseOutcome(t *testing.T) {
	const out = `=== RUN   TestA
--- PASS: TestA (0.00s)
=== RUN   TestB
=== RUN   TestB/sub
    --- PASS: TestB/sub (0.00s)
    --- SKIP: TestB/other (0.00s)
--- FAIL: TestB (0.01s)
==================
WARNING: DATA RACE
Write at 0x00c000012345 by goroutine 7:
FAIL
`
	o := parseOutcome(out, 1)
	want := outcome{Passed: 2, Failed: 1, Skipped: 1, Race: true, Exit: 1}
	if o != want {
		t.Fatalf("parseOutcome = %+v, want %+v", o, want)
	}
	if o.ok() {
		t.Fatal("ok() = true for a failed run")
	}
	if got, want := o.problem(), "DATA RACE, 1 failed, exit 1"; got != want {
		t.Errorf("problem() = %q, want %q", got, want)
	}
}

func TestOutcomeExitAloneFails(t *testing.T) {
	// A binary that dies before printing a verdict (a panic in init, a
	// missing loader) has no FAIL line: its exit code alone must fail it.
	if o := parseOutcome("panic: boom\n", 2); o.ok() {
		t.Fatal("ok() = true for exit 2")
	}
	if o := parseOutcome("--- PASS: TestA (0.00s)\nPASS\n", 0); !o.ok() || o.Passed != 1 {
		t.Fatalf("clean run: %+v", o)
	}
}
