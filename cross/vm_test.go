package main

import (
	"testing"

	"github.com/cellrate/cellrate/cross/guest"
)

func TestSplitConsole(t *testing.T) {
	console := "[    0.1] Booting Linux\r\n" +
		guest.Begin(0, "pathprobe") + "\r\n" + "casp\r\n" + guest.End(0, 0, 0) + "\r\n" +
		guest.Begin(1, "example.com/a") + "\r\n" + "--- PASS: TestA (0.00s)\r\nWARNING: DATA RACE\r\n" +
		guest.End(1, 66, 0) + "\r\n" +
		guest.Begin(2, "example.com/b") + "\r\n" + "=== RUN TestHang\r\n" // no end: the VM died
	runs, done := splitConsole(console)
	if done {
		t.Error("done = true without a done line")
	}
	if got := lastWord(runs[0].out); got != "casp" {
		t.Errorf("probe output %q, want casp", got)
	}
	oc := parseOutcome(runs[1].out, runs[1].exit)
	if oc.Passed != 1 || !oc.Race || oc.Exit != 66 {
		t.Errorf("run 1: %+v", oc)
	}
	if _, ok := runs[2]; ok {
		t.Error("run 2 has no end line but was reported")
	}
	if _, done := splitConsole(console + "\n" + guest.End(2, 0, 0) + "\n" + guest.Done() + "\n"); !done {
		t.Error("done = false after the done line")
	}
}
