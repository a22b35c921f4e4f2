package paired

import (
	"slices"
	"testing"
	"time"
)

var sink []byte

// TestMeasureAlternates: every round times each side once, a first in
// even rounds and b first in odd ones, on G goroutines each; allocations
// per operation are counted.
func TestMeasureAlternates(t *testing.T) {
	var order []string
	turns := map[string]int{}
	mk := func(name string, alloc bool) Case {
		return Case{Name: name, New: func() func(int) {
			return func(n int) {
				order = append(order, name)
				turns[name]++
				for range n {
					if alloc {
						sink = make([]byte, 8)
					}
				}
			}
		}}
	}
	a, b, err := Measure(mk("a", true), mk("b", false), Config{Rounds: 4, Turn: time.Millisecond, G: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Wall) != 4 || len(b.Wall) != 4 || len(a.NsPerOp()) != 4 {
		t.Fatalf("rounds: %d %d", len(a.Wall), len(b.Wall))
	}
	if got := order[len(order)-8:]; !slices.Equal(got, []string{"a", "b", "b", "a", "a", "b", "b", "a"}) {
		t.Fatalf("turn order %v", got)
	}
	if a.AllocsPerOp < 0.99 || a.AllocsPerOp > 1.01 || b.AllocsPerOp > 0.01 {
		t.Fatalf("allocs per op: a %v, b %v", a.AllocsPerOp, b.AllocsPerOp)
	}
	for _, v := range append(a.Wall, b.Wall...) {
		if v <= 0 {
			t.Fatalf("a turn took %v ns/op", v)
		}
	}

	var loops int
	par := Case{Name: "p", New: func() func(int) { loops++; return func(int) {} }}
	if _, _, err := Measure(par, par, Config{Rounds: 2, Turn: time.Millisecond, G: 3}); err != nil || loops != 6 {
		t.Fatalf("G=3 made %d loops for two sides (%v)", loops, err)
	}
	if _, _, err := Measure(par, par, Config{Rounds: 0, Turn: time.Millisecond, G: 1}); err == nil {
		t.Fatal("Rounds 0 accepted")
	}
}

// TestSizeFloor: a turn never runs fewer than minOps operations a
// goroutine, however slow the first turns were (a stall while sizing).
func TestSizeFloor(t *testing.T) {
	slow := Case{Name: "slow", New: func() func(int) {
		return func(n int) { time.Sleep(2 * time.Millisecond) }
	}}
	s := newSide(slow, 2)
	s.size(time.Millisecond)
	if s.n < minOps {
		t.Fatalf("sized at %d operations a goroutine, fewer than %d", s.n, minOps)
	}
}
