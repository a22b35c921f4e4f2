// Package path128 chooses which implementation of the 128-bit atomic
// operations package atomic128 runs: it detects the CPU's features once at
// start-up, honours the CELLRATE_ATOMIC128_PATH environment variable, and
// lets tests (atomic128's and the stress module's) force any path the CPU
// supports.
//
// Paths that run on the same CPU agree with each other only as far as the
// hardware does: cx16 and cx16-vmovdqa may be mixed on one cell, and so may
// casp and llsc, but the fallback's locks are not seen by the instructions
// of the other paths. Change the path only while no operation is running.
package path128

import (
	"fmt"
	"os"
)

// A Path names one implementation of the operations.
type Path uint8

const (
	// Fallback: address-hashed seqlocks in Go, on every target.
	Fallback Path = iota
	// CX16: amd64, every operation by LOCK CMPXCHG16B.
	CX16
	// CX16VMOVDQA: amd64, LOCK CMPXCHG16B, with Load by one VMOVDQA
	// (Intel and AMD CPUs with AVX, which document it as atomic).
	CX16VMOVDQA
	// CASP: arm64 with LSE atomics (ARMv8.1), every operation by CASPAL.
	CASP
	// LLSC: arm64 without LSE (ARMv8.0), LDAXP/STLXP loops.
	LLSC
)

var names = [...]string{
	Fallback:    "fallback",
	CX16:        "cx16",
	CX16VMOVDQA: "cx16-vmovdqa",
	CASP:        "casp",
	LLSC:        "llsc",
}

// String returns the path's name, as atomic128.Path reports it.
func (p Path) String() string {
	if int(p) < len(names) {
		return names[p]
	}
	return fmt.Sprintf("path128.Path(%d)", p)
}

// Parse returns the path with the given name.
func Parse(name string) (Path, error) {
	for p, n := range names {
		if n == name {
			return Path(p), nil
		}
	}
	return Fallback, fmt.Errorf("path128: unknown path %q", name)
}

// EnvVar names the environment variable that, read once at start-up,
// forces a path (for CPU-model test matrices). Empty means unset.
const EnvVar = "CELLRATE_ATOMIC128_PATH"

// Active is the path atomic128 runs. It is set at start-up; tests change it
// with Force.
var Active Path

// EnvErr is why the path EnvVar asked for was refused (unknown or not
// supported here), in which case Active is Fallback; nil otherwise.
var EnvErr error

var supported = detect()

func init() {
	Active = supported[0]
	name := os.Getenv(EnvVar)
	if name == "" {
		return
	}
	p, err := Parse(name)
	if err == nil {
		err = Force(p)
	}
	if err != nil {
		Active = Fallback
		EnvErr = err
	}
}

// Supported returns the paths this build and CPU can run, best first; the
// last is always Fallback.
func Supported() []Path {
	return append([]Path(nil), supported...)
}

// Force makes p the active path if the CPU supports it. Otherwise it sets
// Fallback, which never faults, and returns an error. Call it only while no
// atomic128 operation is running.
func Force(p Path) error {
	for _, s := range supported {
		if s == p {
			Active = p
			return nil
		}
	}
	Active = Fallback
	return fmt.Errorf("path128: path %v is not supported by this build and CPU (supported: %v)", p, supported)
}
