package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestPublishFailureLeavesTargetUntouched(t *testing.T) {
	out := oldReport(t)
	boom := errors.New("boom")
	err := publish(context.Background(), out, func(dir string) error {
		// Half a report, then a failure (the chart panic did this).
		if err := os.WriteFile(filepath.Join(dir, "bench.txt"), []byte("new bench"), 0o644); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("publish: %v, want boom", err)
	}
	untouched(t, out)
}

func TestPublishInterruptedLeavesTargetUntouched(t *testing.T) {
	out := oldReport(t)
	ctx, cancel := context.WithCancel(context.Background())
	err := publish(ctx, out, func(dir string) error {
		cancel() // an interrupt while the report is being written
		return os.WriteFile(filepath.Join(dir, "README.md"), []byte("new"), 0o644)
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("publish: %v, want context.Canceled", err)
	}
	untouched(t, out)
}

func TestPublishReplacesWholeReport(t *testing.T) {
	out := oldReport(t)
	err := publish(context.Background(), out, func(dir string) error {
		return os.WriteFile(filepath.Join(dir, "README.md"), []byte("new"), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := report(t, out); len(got) != 1 || got["README.md"] != "new" {
		t.Errorf("report after publish: %v, want only the new README.md", got)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("report directory: %v, %v; want mode 0755", fi.Mode(), err)
	}
	if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 1 {
		t.Errorf("beside the report: %v, want nothing", left)
	}
	// Into a directory that does not exist yet.
	fresh := filepath.Join(t.TempDir(), "a", "b")
	if err := publish(context.Background(), fresh, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error(err)
	}
}

// TestRunGOMAXPROCS1 renders the output of a one-CPU run from before the
// fix (goroutine counts [1 1 8], so names g=1#01 and no -N suffix): the
// old report panicked in the chart code after rewriting bench.txt.
func report(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = string(b)
	}
	return m
}
func oldReport(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"README.md": "old readme", "bench.txt": "old bench", "limiters.svg": "old chart"} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
func untouched(t *testing.T, out string) {
	t.Helper()
	got := report(t, out)
	want := map[string]string{"README.md": "old readme", "bench.txt": "old bench", "limiters.svg": "old chart"}
	if len(got) != len(want) {
		t.Errorf("%s holds %d files, want the old %d: %v", out, len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s/%s = %q, want the old %q", out, k, got[k], v)
		}
	}
	left, _ := os.ReadDir(filepath.Dir(out))
	if len(left) != 1 {
		t.Errorf("beside the report: %v, want nothing", left)
	}
}
