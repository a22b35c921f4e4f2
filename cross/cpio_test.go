package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCPIOHeaderLayout checks an entry byte by byte against the newc layout:
// magic, 13 eight-digit hex fields, the name with its NUL, padding to 4.
func TestCPIOHeaderLayout(t *testing.T) {
	var b bytes.Buffer
	c := newCPIOWriter(&b)
	c.Data("/a", 0o644, []byte("hi"))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	want := "070701" + "00000001" + "000081A4" + "00000000" + "00000000" + "00000001" + "00000000" +
		"00000002" + "00000000" + "00000000" + "00000000" + "00000000" + "00000002" + "00000000" +
		"a\x00" + "hi\x00\x00"
	if got := b.String()[:len(want)]; got != want {
		t.Fatalf("entry:\n got %q\nwant %q", got, want)
	}
	if b.Len()%4 != 0 {
		t.Errorf("archive length %d is not a multiple of 4", b.Len())
	}
}

// TestCPIOReadBack lists and unpacks an archive with GNU cpio, when the
// host has it, to check the writer against an independent reader.
func TestCPIOReadBack(t *testing.T) {
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skip("no cpio on this host")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, []byte("hello, odd length"), 0o644); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	c := newCPIOWriter(&b)
	c.Dir("/d")
	c.File("/d/f", 0o755, src)
	c.Data("/d/m.json", 0o644, []byte("{}"))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("cpio", "-id", "--quiet")
	cmd.Dir, cmd.Stdin = out, &b
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio -id: %v\n%s", err, msg)
	}
	for name, want := range map[string]string{"d/f": "hello, odd length", "d/m.json": "{}"} {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
}
