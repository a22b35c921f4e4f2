package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// A need is a program or file a row uses and the Debian package that has it.
type need struct {
	what string // a command looked up in PATH, or an absolute file path
	pkg  string
}

func (n need) present() bool {
	if strings.HasPrefix(n.what, "/") {
		_, err := os.Stat(n.what)
		return err == nil
	}
	_, err := exec.LookPath(n.what)
	return err == nil
}

// needs lists what running r takes beyond Go itself.
func needs(r row) []need {
	var n []need
	switch r.Runner {
	case qemuUser:
		n = append(n, need{r.QEMU, "qemu-user"})
	case vm:
		n = append(n,
			need{"qemu-system-aarch64", "qemu-system-arm"},
			need{"dpkg-deb", "dpkg"},
			need{"apt-get", "apt"})
	}
	if r.Race {
		switch r.GOARCH {
		case "arm64":
			n = append(n,
				need{"aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"},
				need{sysrootLib + "/libc.so", "libc6-dev-arm64-cross"})
		default:
			n = append(n, need{"gcc", "gcc"})
		}
	}
	return n
}

// installCommands are the commands that install what rs need and is
// missing, none when nothing is.
func installCommands(rs []row) [][]string {
	var pkgs []string
	vmRows := false
	for _, r := range rs {
		vmRows = vmRows || r.Runner == vm
		for _, n := range needs(r) {
			if !n.present() && !slices.Contains(pkgs, n.pkg) {
				pkgs = append(pkgs, n.pkg)
			}
		}
	}
	var cmds [][]string
	// The kernel is an arm64 package: apt must know that architecture.
	if vmRows && !hasForeignArch("arm64") {
		cmds = append(cmds, []string{"dpkg", "--add-architecture", "arm64"})
	}
	if len(pkgs) > 0 || len(cmds) > 0 {
		cmds = append(cmds, []string{"apt-get", "update", "-q"})
	}
	if len(pkgs) > 0 {
		cmds = append(cmds, append([]string{"apt-get", "install", "-y", "-q", "--no-install-recommends",
			"-o", "DPkg::Lock::Timeout=600"}, pkgs...))
	}
	return cmds
}

func hasForeignArch(arch string) bool {
	out, err := exec.Command("dpkg", "--print-foreign-architectures").Output()
	return err == nil && slices.Contains(strings.Fields(string(out)), arch)
}

// ensureDeps installs what rs need, as root with apt-get; otherwise, or
// when install is false, it returns an error saying what to run.
func ensureDeps(rs []row, install bool) error {
	cmds := installCommands(rs)
	if len(cmds) == 0 {
		return nil
	}
	var say []string
	for _, c := range cmds {
		say = append(say, "  "+strings.Join(c, " "))
	}
	if _, err := exec.LookPath("apt-get"); !install || os.Geteuid() != 0 || err != nil {
		return fmt.Errorf("missing tools; as root on Debian run:\n%s", strings.Join(say, "\n"))
	}
	fmt.Fprintf(os.Stderr, "cross: installing:\n%s\n", strings.Join(say, "\n"))
	for _, c := range cmds {
		if err := runRetrying(c); err != nil {
			return err
		}
	}
	return nil
}

// runRetrying runs an apt or dpkg command, retrying while another process
// may hold apt's locks.
func runRetrying(argv []string) error {
	var err error
	for try := 0; try < 5; try++ {
		if try > 0 {
			time.Sleep(15 * time.Second)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err = cmd.Run(); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s: %v", strings.Join(argv, " "), err)
}
