//go:build !linux

package redistest

import "syscall"

// procAttr: outside Linux a killed test binary's servers outlive it.
func procAttr() *syscall.SysProcAttr { return nil }
