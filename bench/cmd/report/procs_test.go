package main

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cellrate/cellrate/bench/paired"
)

// procRun is one process's groups: gcra against the baseline, both with
// the process's own offset (a slower process slows both) and gcra's
// speedup moved by shift, a factor of the process.
func procRun(r *rand.Rand, shift float64) []group {
	slow := math.Exp(0.3 * r.NormFloat64())
	return []group{{ID: "limiters/admit", Kind: speedup, G: 1, Rows: []row{{
		Label: "cellrate gcra",
		Ours:  sample("gcra", 100*slow/shift, 0.01, 6, r),
		Base:  sample("x-time-rate", 100*slow, 0.01, 6, r),
	}}}}
}

// TestPool: processes' groups are pooled round by round, each round
// marked with its process, allocations averaged; a process that measured
// other groups or rows is refused.
func TestPool(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var out []group
	var err error
	for p := range 3 {
		gs := procRun(r, 1)
		gs[0].Rows[0].Ours.AllocsPerOp = float64(p)
		if out, err = pool(out, gs, p); err != nil {
			t.Fatal(err)
		}
	}
	row := out[0].Rows[0]
	if len(row.Ours.CPU) != 18 || len(row.Base.Wall) != 18 || !slices.Equal(row.Proc, []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2}) {
		t.Fatalf("pooled %d rounds, processes %v", len(row.Ours.CPU), row.Proc)
	}
	if row.Ours.AllocsPerOp != 0+1+2 || row.procs() != 3 {
		t.Fatalf("allocations summed to %v, %d processes", row.Ours.AllocsPerOp, row.procs())
	}
	if s := row.split(row.Ours.CPU); len(s) != 3 || len(s[2]) != 6 || s[2][0] != row.Ours.CPU[12] {
		t.Fatalf("split: %v", s)
	}
	other := procRun(r, 1)
	other[0].Rows[0].Label = "cellrate bucket"
	if _, err := pool(out, other, 3); err == nil {
		t.Fatal("a process that measured another row was pooled")
	}
	other = procRun(r, 1)
	other[0].G = 2
	if _, err := pool(out, other, 3); err == nil {
		t.Fatal("a process that measured another group was pooled")
	}
	other = procRun(r, 1)
	other[0].Rows[0].Base.Wall = other[0].Rows[0].Base.Wall[:5]
	if _, err := pool(out, other, 3); err == nil {
		t.Fatal("unpaired rounds were pooled")
	}
}

// TestEstimateOverProcesses: with rounds from several processes, a
// row's estimate is the interval over processes: it widens with the
// processes' disagreement, where Shift on every round would not.
func TestEstimateOverProcesses(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pooled := func(shifts ...float64) row {
		var out []group
		for p, s := range shifts {
			var err error
			if out, err = pool(out, procRun(r, s), p); err != nil {
				t.Fatal(err)
			}
		}
		return out[0].Rows[0]
	}
	agreeing := pooled(2, 2, 2, 2)
	e, _ := estimate(speedup, agreeing)
	// About the run-to-run part alone: ±runFloor, in logs.
	if e.Procs != 4 || e.Lo > 2 || e.Hi < 2 || math.Log(e.Hi/e.Lo) < 2*runFloor() || math.Log(e.Hi/e.Lo) > 2*runFloor()+0.02 {
		t.Fatalf("four processes agreeing on 2x: %+v, want 2 ± %.3f (in logs)", e, runFloor())
	}
	split := pooled(1.6, 2.5, 1.6, 2.5)
	e, _ = estimate(speedup, split)
	all := paired.Ratio(split.Base.CPU, split.Ours.CPU, level)
	if e.Procs != 4 || e.Lo > 1.6 || e.Hi < 2.5 || all.Hi-all.Lo > e.Hi-e.Lo {
		t.Fatalf("processes at 1.6x and 2.5x: %+v (every round as one process: %+v)", e, all)
	}
	if v := verdict(speedup, e); v != "faster; spread too wide to say how much" {
		t.Errorf("verdict %q", v)
	}
	one := pooled(2)
	if e, _ := estimate(speedup, one); e.Procs != 0 || e.N != 6 {
		t.Fatalf("one process: %+v, want the signed-rank interval of its rounds", e)
	}
}

// TestAgreement: a rerun's figures inside the report's intervals count
// as agreeing, one outside is listed, rows without an interval are
// counted apart, and runs of different sizes are flagged.
func TestAgreement(t *testing.T) {
	// gcra's speedup in each process, and keyed's.
	mk := func(gcra []float64, keyed float64) results {
		r := rand.New(rand.NewPCG(uint64(keyed), 1))
		var out []group
		for p, g := range gcra {
			gs := procRun(r, g)
			gs = append(gs, group{ID: "keyed/1000", Kind: speedup, G: 1, Rows: []row{{
				Label: "vs sethvargo/go-limiter",
				Ours:  sample("keyed", 50, 0.01, 6, r),
				Base:  sample("sethvargo", 50*keyed, 0.01, 6, r),
			}}})
			out, _ = pool(out, gs, p)
		}
		return results{Config: config{Procs: len(gcra), Rounds: 6}, Groups: out}
	}
	a, b := mk([]float64{1.9, 2.1, 1.9, 2.1}, 3), mk([]float64{2.05, 2.05, 2.05, 2.05}, 5)
	rows := agreement(a, b)
	if len(rows) != 2 {
		t.Fatalf("%d rows in both", len(rows))
	}
	if !rows[0].within() || rows[1].within() {
		t.Fatalf("gcra 1.9x-2.1x against 2.05x should agree, keyed 3x against 5x not: %+v", rows)
	}
	var w bytes.Buffer
	writeAgreement(&w, a, b, rows)
	if out := w.String(); !strings.Contains(out, "1 of 2 figures of the rerun (50.0%) fall within") || !strings.Contains(out, "keyed/1000: vs sethvargo/go-limiter") ||
		strings.Contains(out, "limiters/admit: cellrate gcra") || strings.Contains(out, "differ in size") {
		t.Errorf("agreement:\n%s", out)
	}
	w.Reset()
	c := mk([]float64{2}, 3)
	writeAgreement(&w, c, b, agreement(c, b))
	if out := w.String(); !strings.Contains(out, "differ in size") {
		t.Errorf("a one-process report against a four-process rerun:\n%s", out)
	}
}

// TestMethodSaysProcesses: a report pooled over processes says so, and
// that its intervals are where a rerun lands; one of one process says
// its interval is within that process only.
func TestMethodSaysProcesses(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var gs []group
	for p := range 4 {
		gs, _ = pool(gs, procRun(r, 2), p)
	}
	res := synthetic()
	res.Config.Procs, res.Config.Rounds, res.Groups = 4, 6, gs
	files, err := render(res)
	if err != nil {
		t.Fatal(err)
	}
	if md := string(files["README.md"]); !strings.Contains(md, "measured in 4 fresh processes, one after another, 6 rounds in each") || !strings.Contains(md, "where a rerun of this report on this machine lands, 19 times in 20") ||
		!strings.Contains(md, "a run-to-run spread of 1.5% (a relative standard deviation)") || !strings.Contains(md, "no interval is narrower than ±4.2%") {
		t.Errorf("method:\n%s", md[:2000])
	}
	if fig := string(files["figures.md"]); !strings.Contains(fig, "the 95% interval a rerun lands in (from 4 processes)") {
		t.Errorf("figures:\n%s", fig)
	}
	files, _ = render(synthetic())
	if md := string(files["README.md"]); !strings.Contains(md, "not between runs") {
		t.Errorf("a one-process report does not say its interval is within the process:\n%s", md[:2000])
	}
}

// TestBudget: runProcs runs every process within its budget, and past it
// stops at minProcs, not before, pooling what ran.
func TestBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	calls := 0
	work := func(_ context.Context, p int) ([]group, error) {
		calls++
		time.Sleep(20 * time.Millisecond)
		return procRun(r, 2), nil
	}
	gs, n, err := runProcs(t.Context(), config{Procs: 5}, work)
	if err != nil || n != 5 || calls != 5 || gs[0].Rows[0].procs() != 5 {
		t.Fatalf("no budget: %d processes, %d calls (%v)", n, calls, err)
	}
	calls = 0
	gs, n, err = runProcs(t.Context(), config{Procs: 8, Budget: time.Millisecond}, work)
	if err != nil || n != minProcs || calls != minProcs || gs[0].Rows[0].procs() != minProcs {
		t.Fatalf("over budget: %d processes, %d calls, want %d (%v)", n, calls, minProcs, err)
	}
	boom := errors.New("boom")
	if _, _, err := runProcs(t.Context(), config{Procs: 3}, func(context.Context, int) ([]group, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("a failed process: %v", err)
	}
}
