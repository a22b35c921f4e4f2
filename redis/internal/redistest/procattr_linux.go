package redistest

import "syscall"

// procAttr has the kernel kill a server when its test binary dies, so a
// binary killed at a time-out (go test's, or a mutation run's) leaves no
// redis-server behind.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
