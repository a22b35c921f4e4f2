package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// A cpioWriter writes the "newc" cpio format, the one the Linux kernel
// unpacks as an initramfs. Entries are written in the order given: a
// directory must come before what it holds.
type cpioWriter struct {
	w   *bufio.Writer
	ino int
	err error
}

// File mode type bits of the newc header.
const (
	cpioDir     = 0o040000
	cpioRegular = 0o100000
	cpioCharDev = 0o020000
)

func newCPIOWriter(w io.Writer) *cpioWriter { return &cpioWriter{w: bufio.NewWriter(w)} }

// header writes one entry's header and name, padded to 4 bytes.
func (c *cpioWriter) header(name string, mode uint32, size int64, rdevMajor, rdevMinor uint32) {
	if c.err != nil {
		return
	}
	name = strings.TrimPrefix(name, "/")
	c.ino++
	nlink := 1
	if mode&cpioDir != 0 {
		nlink = 2
	}
	_, c.err = fmt.Fprintf(c.w, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%s\x00",
		c.ino, mode, 0, 0, nlink, 0, size, 0, 0, rdevMajor, rdevMinor, len(name)+1, 0, name)
	c.pad(110 + len(name) + 1)
}

// pad writes zeros up to the next multiple of 4 after n bytes.
func (c *cpioWriter) pad(n int) {
	if c.err == nil {
		_, c.err = c.w.Write(make([]byte, (4-n%4)%4))
	}
}

// Dir adds a directory.
func (c *cpioWriter) Dir(name string) { c.header(name, cpioDir|0o755, 0, 0, 0) }

// CharDev adds a character device node, which needs no privilege to write.
func (c *cpioWriter) CharDev(name string, major, minor uint32) {
	c.header(name, cpioCharDev|0o600, 0, major, minor)
}

// Data adds a regular file holding b.
func (c *cpioWriter) Data(name string, perm uint32, b []byte) {
	c.header(name, cpioRegular|perm, int64(len(b)), 0, 0)
	if c.err == nil {
		_, c.err = c.w.Write(b)
	}
	c.pad(len(b))
}

// File adds a regular file with the contents of the host file src.
func (c *cpioWriter) File(name string, perm uint32, src string) {
	if c.err != nil {
		return
	}
	f, err := os.Open(src)
	if err != nil {
		c.err = err
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		c.err = err
		return
	}
	c.header(name, cpioRegular|perm, fi.Size(), 0, 0)
	if c.err == nil {
		_, c.err = io.Copy(c.w, f)
	}
	c.pad(int(fi.Size() % 4))
}

// Close writes the trailer and flushes; it returns the first error.
func (c *cpioWriter) Close() error {
	c.header("TRAILER!!!", 0, 0, 0, 0)
	if c.err == nil {
		c.err = c.w.Flush()
	}
	return c.err
}
