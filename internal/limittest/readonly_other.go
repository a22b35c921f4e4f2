//go:build !linux

package limittest

import "testing"

// ReadOnly needs mprotect; elsewhere it skips the test.
func ReadOnly[T any](t *testing.T, v *T) *T {
	t.Skip("read-only pages are set up on linux only")
	return nil
}

// Faults runs f; nothing is read-only here.
func Faults(f func()) bool { f(); return false }
