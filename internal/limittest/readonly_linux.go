package limittest

import (
	"reflect"
	"runtime/debug"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cellrate/cellrate/internal/race"
)

// ReadOnly returns a copy of *v on a page the process may only read, so
// that any store to it, a compare-and-swap that fails included, faults.
// *v must hold no pointer that is not nil (the garbage collector does not
// see the page): a Limiter's optional clock, left unset, is fine.
// The page is unmapped when the test ends.
func ReadOnly[T any](t *testing.T, v *T) *T {
	t.Helper()
	if race.Enabled {
		t.Skip("under -race the atomics run in the race runtime's C code, where a fault cannot be recovered")
	}
	if livePointers(reflect.ValueOf(v).Elem()) {
		t.Fatalf("%v holds pointers", reflect.TypeFor[T]())
	}
	size := int(unsafe.Sizeof(*v))
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	copy(mem, unsafe.Slice((*byte)(unsafe.Pointer(v)), size))
	if err := unix.Mprotect(mem, unix.PROT_READ); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Munmap(mem) })
	return (*T)(unsafe.Pointer(&mem[0]))
}

// Faults runs f and reports whether it stored to read-only memory.
func Faults(f func()) (faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { faulted = recover() != nil }()
	f()
	return false
}

// livePointers reports whether v holds a pointer that is not nil (or a
// string that is not empty).
func livePointers(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if livePointers(v.Field(i)) {
				return true
			}
		}
		return false
	case reflect.Array:
		for i := range v.Len() {
			if livePointers(v.Index(i)) {
				return true
			}
		}
		return false
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Chan, reflect.Slice, reflect.Interface, reflect.UnsafePointer:
		return !v.IsNil()
	case reflect.String:
		return v.Len() != 0
	}
	return true
}
