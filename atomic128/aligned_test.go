package atomic128_test

import (
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/cellrate/cellrate/atomic128"
)

// alignedPairs returns n pairs on a 16-byte boundary in plain memory.
func alignedPairs(n int) []([2]uint64) {
	raw := make([]uint64, 2*n+1)
	off := uintptr(unsafe.Pointer(&raw[0])) % 16 / 8
	return unsafe.Slice((*[2]uint64)(unsafe.Pointer(&raw[off])), n)
}

func TestAligned(t *testing.T) {
	ps := alignedPairs(4)
	p := &ps[1]
	if a, b := atomic128.LoadAligned(p); a != 0 || b != 0 {
		t.Fatal(a, b)
	}
	if atomic128.CompareAndSwapAligned(p, 1, 0, 5, 6) || atomic128.CompareAndSwapAligned(p, 0, 1, 5, 6) {
		t.Fatal("swapped on a mismatch")
	}
	if !atomic128.CompareAndSwapAligned(p, 0, 0, 5, 6) {
		t.Fatal("did not swap")
	}
	if a, b := atomic128.LoadAligned(p); a != 5 || b != 6 || ps[0] != [2]uint64{} || ps[2] != [2]uint64{} {
		t.Fatal("wrong pair or neighbours written", ps)
	}
}

func TestAlignedPanicsMisaligned(t *testing.T) {
	raw := alignedPairs(3)
	p := (*[2]uint64)(unsafe.Add(unsafe.Pointer(&raw[0]), 8))
	for name, f := range map[string]func(){
		"LoadAligned":           func() { atomic128.LoadAligned(p) },
		"CompareAndSwapAligned": func() { atomic128.CompareAndSwapAligned(p, 0, 0, 1, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic on a misaligned pair", name)
				}
			}()
			f()
		}()
	}
}

// TestAlignedNoLostUpdate: goroutines add to both halves of neighbouring
// pairs by compare-and-swap; no addition is lost and the halves agree.
func TestAlignedNoLostUpdate(t *testing.T) {
	ps := alignedPairs(4)
	const G, N = 4, 2000
	var wg sync.WaitGroup
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range N {
				p := &ps[(g+i)%len(ps)]
				for {
					a, b := atomic128.LoadAligned(p)
					if a != b {
						t.Errorf("torn pair %d, %d", a, b)
						return
					}
					if atomic128.CompareAndSwapAligned(p, a, b, a+1, b+1) {
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	var sum uint64
	for i := range ps {
		a, b := atomic128.LoadAligned(&ps[i])
		if a != b {
			t.Fatal("torn")
		}
		sum += a
	}
	if sum != G*N {
		t.Fatalf("sum %d, want %d", sum, G*N)
	}
}

// TestAlignedInline: LoadAligned, CompareAndSwapAligned and
// LoadFirstAligned inline, as the methods do (see TestMethodsInline).
func TestAlignedInline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("no assembly on " + runtime.GOARCH)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goCmd, "build", "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	for _, f := range []string{"LoadAligned", "CompareAndSwapAligned", "LoadFirstAligned"} {
		if !strings.Contains(string(out), "can inline "+f+"\n") {
			t.Errorf("%s does not inline:\n%s", f, out)
		}
	}
}
