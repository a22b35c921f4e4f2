//go:build linux

package main

import (
	"net"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// inNewNetns runs f on a thread of its own in a new network namespace,
// where lo is down as in the VM, and throws the thread away after. It skips
// where namespaces cannot be made (not root, or a sandbox that forbids it).
func inNewNetns(t *testing.T, f func()) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		errc <- nil
		f()
		errc <- nil
	}()
	if err := <-errc; err != nil {
		t.Skipf("no new network namespace here: %v", err)
	}
	<-errc
}

// connects reports whether a connection to a listener on addr can be made
// from the calling thread's namespace.
func connects(network, addr string) bool {
	ln, err := net.Listen(network, addr)
	if err != nil {
		return false
	}
	defer ln.Close()
	c, err := net.DialTimeout(network, ln.Addr().String(), 2*time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func TestLoopbackUp(t *testing.T) {
	var before4, after4, after6 bool
	var did []string
	var err error
	inNewNetns(t, func() {
		before4 = connects("tcp4", "127.0.0.1:0")
		did, err = setLoopbackUp()
		after4 = connects("tcp4", "127.0.0.1:0")
		after6 = connects("tcp6", "[::1]:0")
	})
	if before4 {
		t.Fatal("connected on 127.0.0.1 with lo down: the test shows nothing here")
	}
	t.Logf("did: %q", did)
	if err != nil {
		t.Fatal(err)
	}
	if !after4 || !after6 {
		t.Fatalf("after setLoopbackUp: connect on 127.0.0.1 %v, on [::1] %v; want both", after4, after6)
	}
}

// TestAddAddr checks the ioctls that add an address the kernel did not give
// lo, on addresses it never gives.
func TestAddAddr(t *testing.T) {
	p4, p6 := netip.MustParsePrefix("127.0.0.2/8"), netip.MustParsePrefix("::2/128")
	var have map[netip.Prefix]bool
	var err4, err6, err error
	inNewNetns(t, func() {
		if _, err = setLoopbackUp(); err != nil {
			return
		}
		var fd int
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return
		}
		defer unix.Close(fd)
		err4, err6 = addAddr4(fd, p4), addAddr6(fd, p6)
		have, err = loAddrs()
	})
	if err != nil || err4 != nil || err6 != nil {
		t.Fatalf("setup %v; add %s: %v; add %s: %v", err, p4, err4, p6, err6)
	}
	if !have[p4] || !have[p6] {
		t.Fatalf("lo has %v; want %s and %s among them", have, p4, p6)
	}
}
