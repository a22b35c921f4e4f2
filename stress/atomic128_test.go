package stress

import (
	"os"
	"testing"
	"time"

	"github.com/cellrate/cellrate/atomic128"
)

// cellsFor returns the cells the atomic128 runs drive: real ones, or
// broken ones under -stress.broken.
func cellsFor(n int) []Pair {
	if *brokenFlag != "" {
		return BrokenCells(*brokenFlag, n)
	}
	return Cells(n)
}

// eachPath runs f once per atomic128 path, with that path forced.
func eachPath(t *testing.T, f func(t *testing.T)) {
	for _, p := range Paths() {
		t.Run(p.Name, func(t *testing.T) {
			restore := p.Use()
			defer restore()
			f(t)
		})
	}
}

func TestConservation(t *testing.T) {
	eachPath(t, func(t *testing.T) {
		if err := Conservation(cellsFor(4), runFor(t), crowd(), seed(t)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestNoLostUpdate(t *testing.T) {
	eachPath(t, func(t *testing.T) {
		if err := NoLostUpdate(cellsFor(4), runFor(t), crowd(), seed(t)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestNoTornRead(t *testing.T) {
	eachPath(t, func(t *testing.T) {
		if err := NoTornRead(cellsFor(4), runFor(t), crowd(), seed(t)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestLinearizable(t *testing.T) {
	eachPath(t, func(t *testing.T) {
		rounds, h, err := Linearizable(cellsFor(4), runFor(t), 4, 12, seed(t))
		if err != nil {
			t.Fatalf("%v\n%s", err, Describe(PairModel, h))
		}
		t.Logf("%d histories of %d operations, all linearizable", rounds, 4*12)
	})
}

// TestBrokenCellIsCaught proves the runs can fail: each must reject the
// cells it is meant to catch within its time. A torn cell breaks every
// check; a cell whose only fault is a non-atomic CompareAndSwap never
// shows a torn pair, so only the checks of updates can see it.
func TestBrokenCellIsCaught(t *testing.T) {
	d := 2 * time.Second
	s := seed(t)
	runs := []struct {
		name  string
		kinds []string
		run   func(cells []Pair) error
	}{
		{"Conservation", []string{"torn"}, func(c []Pair) error { return Conservation(c, d, crowd(), s) }},
		{"NoTornRead", []string{"torn"}, func(c []Pair) error { return NoTornRead(c, d, crowd(), s) }},
		{"NoLostUpdate", []string{"torn", "cas"}, func(c []Pair) error { return NoLostUpdate(c, d, crowd(), s) }},
		{"Linearizable", []string{"torn", "cas"}, func(c []Pair) error {
			rounds, h, err := Linearizable(c, d, 4, 12, s)
			if err != nil {
				t.Logf("caught after %d rounds:\n%s", rounds, Describe(PairModel, h))
			}
			return err
		}},
	}
	for _, r := range runs {
		for _, kind := range r.kinds {
			t.Run(r.name+"/"+kind, func(t *testing.T) {
				// A broken cell is caught by chance within a run's time; a
				// correct cell is never caught.
				mustCatch(t, func(int) (bool, error) {
					err := r.run(BrokenCells(kind, 4))
					return err != nil, err
				})
			})
		}
	}
}

// TestPathsForced checks each path really runs when forced, so that a
// run named after a path never silently runs another, and that the best
// path is the one the cross-architecture harness expects on this CPU.
func TestPathsForced(t *testing.T) {
	if want := os.Getenv("CELLRATE_EXPECT_PATH"); want != "" && Paths()[0].Name != want {
		t.Errorf("best path here is %s, the harness expects %s", Paths()[0].Name, want)
	}
	for _, p := range Paths() {
		restore := p.Use()
		got := atomic128.Path()
		restore()
		if got != p.Name {
			t.Errorf("forced %s, atomic128.Path() = %s", p.Name, got)
		}
	}
}
