//go:build linux

package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loopback addresses the tests listen and connect on.
var (
	lo4 = netip.MustParsePrefix("127.0.0.1/8")
	lo6 = netip.MustParsePrefix("::1/128")
)

// loopbackUp brings the loopback interface up, as no one else in the VM
// does: with lo down, listening on 127.0.0.1 or [::1] succeeds but
// connecting does not, and the tests that serve on loopback skip. Linux
// gives lo 127.0.0.1/8 and ::1 when it comes up; whichever it lacks after
// that is added here. It prints what it did, and what failed, on the
// console (the host keeps it in the row's console log) and never stops the
// boot: a test that needs loopback still skips without it.
func loopbackUp() {
	did, err := setLoopbackUp()
	if err != nil {
		fmt.Println("vminit: lo: FAILED to bring up loopback:", err)
		return
	}
	fmt.Printf("vminit: lo: %s\n", strings.Join(did, "; "))
}

func setLoopbackUp() (did []string, err error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return nil, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return nil, fmt.Errorf("SIOCGIFFLAGS: %w", err)
	}
	if flags := ifr.Uint16(); flags&unix.IFF_UP != 0 {
		did = append(did, "was up already")
	} else {
		ifr.SetUint16(flags | unix.IFF_UP)
		if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
			return nil, fmt.Errorf("SIOCSIFFLAGS IFF_UP: %w", err)
		}
		did = append(did, "brought up (SIOCSIFFLAGS IFF_UP)")
	}

	have, err := loAddrs()
	if err != nil {
		return did, fmt.Errorf("%s, but its addresses are unknown: %w", strings.Join(did, "; "), err)
	}
	var errs []error
	for _, p := range []netip.Prefix{lo4, lo6} {
		if have[p] {
			did = append(did, p.String()+" from the kernel")
			continue
		}
		add := addAddr4
		if p.Addr().Is6() {
			add = addAddr6
		}
		if err := add(fd, p); err != nil {
			errs = append(errs, fmt.Errorf("add %s: %w", p, err))
			continue
		}
		did = append(did, p.String()+" added")
	}
	if have, err = loAddrs(); err == nil {
		for _, p := range []netip.Prefix{lo4, lo6} {
			if !have[p] {
				errs = append(errs, fmt.Errorf("%s missing after setup", p))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return did, fmt.Errorf("%s, but: %w", strings.Join(did, "; "), err)
	}
	return did, nil
}

// loAddrs returns the addresses lo has, as prefixes.
func loAddrs() (map[netip.Prefix]bool, error) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return nil, err
	}
	addrs, err := lo.Addrs()
	if err != nil {
		return nil, err
	}
	have := map[netip.Prefix]bool{}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			have[p] = true
		}
	}
	return have, nil
}

// addAddr4 gives lo the IPv4 prefix p with SIOCSIFADDR and SIOCSIFNETMASK
// on the AF_INET socket fd.
func addAddr4(fd int, p netip.Prefix) error {
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	a := p.Addr().As4()
	if err := ifr.SetInet4Addr(a[:]); err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFADDR, ifr); err != nil {
		return fmt.Errorf("SIOCSIFADDR: %w", err)
	}
	mask := net.CIDRMask(p.Bits(), 32)
	if err := ifr.SetInet4Addr(mask); err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFNETMASK, ifr); err != nil {
		return fmt.Errorf("SIOCSIFNETMASK: %w", err)
	}
	return nil
}

// in6Ifreq is the kernel's struct in6_ifreq (linux/ipv6.h).
type in6Ifreq struct {
	addr      [16]byte
	prefixlen uint32
	ifindex   int32
}

// addAddr6 gives lo the IPv6 prefix p with SIOCSIFADDR on an AF_INET6
// socket; fd (AF_INET) is used to look up lo's index.
func addAddr6(fd int, p netip.Prefix) error {
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		return fmt.Errorf("SIOCGIFINDEX: %w", err)
	}
	fd6, err := unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket AF_INET6: %w", err)
	}
	defer unix.Close(fd6)
	req := in6Ifreq{addr: p.Addr().As16(), prefixlen: uint32(p.Bits()), ifindex: int32(ifr.Uint32())}
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd6), unix.SIOCSIFADDR, uintptr(unsafe.Pointer(&req))); errno != 0 {
		return fmt.Errorf("SIOCSIFADDR (in6_ifreq): %w", errno)
	}
	return nil
}
