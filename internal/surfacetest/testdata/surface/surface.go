// Package surface is TestSurfaceCount's package: one identifier of each
// kind go doc -all lists, and one of each kind it leaves out.
package surface

// C, V, F and T are top-level names; c, v, f and t are not exported.
const (
	C = 1
	c = 2
)

var (
	V = 1
	v = 2
)

func F() {}
func f() {}

// T is a type with a method M and an unexported one.
type T int

func (T) M() {}
func (T) m() {}

// S has an exported field and method, and an unexported field.
type S struct {
	Field int
	field int
}

func (*S) Method() {}

// I has an exported and an unexported method.
type I interface {
	M()
	m()
}

type t struct{ Hidden int }

func (t) Hidden2() {}
