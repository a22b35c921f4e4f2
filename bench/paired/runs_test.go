package paired

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Student's t quantiles from every table.
func TestTQuantile(t *testing.T) {
	for _, c := range []struct {
		q    float64
		df   int
		want float64
	}{{0.975, 1, 12.706}, {0.975, 2, 4.303}, {0.975, 3, 3.182}, {0.975, 5, 2.571}, {0.975, 10, 2.228}, {0.975, 30, 2.042}, {0.95, 4, 2.132}, {0.995, 7, 3.499}} {
		if got := tQuantile(c.q, c.df); math.Abs(got-c.want) > 0.0006 {
			t.Errorf("t(%v, %d) = %.4f, want %.3f", c.q, c.df, got, c.want)
		}
	}
}

func TestRunsKnown(t *testing.T) {
	// Processes whose estimates are 1, 2, 3: mean 2, s = 1, K = 3, so
	// the half width is t(0.975, 2) · sqrt(2/3).
	e := Runs([][]float64{{1, 1, 1}, {2, 1, 3}, {3, 3, 3}}, 0.95, 0)
	half := 4.302653 * math.Sqrt(2.0/3)
	if math.Abs(e.Center-2) > 1e-12 || math.Abs(e.Lo-(2-half)) > 1e-5 || math.Abs(e.Hi-(2+half)) > 1e-5 || e.N != 9 || e.Procs != 3 || e.Achieved != 0.95 {
		t.Fatalf("Runs = %+v, want 2 ± %.4f over 3 processes, 9 rounds", e, half)
	}
	if e := Runs([][]float64{{1, 2, 3}}, 0.95, 0); e.Center != 2 || !math.IsInf(e.Lo, -1) || e.Achieved != 0 {
		t.Fatalf("one process gives no interval, got %+v", e)
	}
	num := [][]float64{{2, 4}, {6, 6}, {3, 9}}
	den := [][]float64{{1, 2}, {2, 3}, {1, 3}}
	r := RatioRuns(num, den, 0.95, 0)
	if lr := RatioRuns(den, num, 0.95, 0); math.Abs(r.Center*lr.Center-1) > 1e-12 || math.Abs(r.Lo*lr.Hi-1) > 1e-12 {
		t.Fatalf("RatioRuns(num, den) %+v is not the reciprocal of RatioRuns(den, num) %+v", r, lr)
	}
	if d := DiffRuns([][]float64{{5, 6}, {7, 8}}, [][]float64{{1, 2}, {3, 4}}, 0.95, 0); d.Center != 4 || d.Lo != 4 || d.Hi != 4 {
		t.Fatalf("DiffRuns of a constant 4 = %+v", d)
	}
	// Processes that agree leave only the run-to-run part: z · runSD · √2,
	// relative to the difference for DiffRuns.
	if e := Runs([][]float64{{1, 1}, {1, 1}, {1, 1}}, 0.95, 0.01); math.Abs(e.Hi-1-1.959964*0.01*math.Sqrt2) > 1e-6 || math.Abs(1-e.Lo-(e.Hi-1)) > 1e-12 {
		t.Fatalf("Runs of agreeing processes with a 1%% run-to-run part = %+v", e)
	}
	if d := DiffRuns([][]float64{{5, 6}, {7, 8}}, [][]float64{{1, 2}, {3, 4}}, 0.95, 0.1); math.Abs(d.Hi-4-1.959964*0.4*math.Sqrt2) > 1e-5 {
		t.Fatalf("DiffRuns of a constant 4 with a 10%% run-to-run part = %+v", d)
	}
}

// run simulates one run of k processes of r rounds: each process has its
// own offset (what a fresh process and another moment bring: layout,
// heap, load), drawn with spread between; each round adds noise of
// spread within; the whole run is moved by a normal offset of spread
// runSD. Heavy: both are Laplace (double exponential) rather
// than normal, a heavier tail.
func run(rng *rand.Rand, k, r int, between, within float64, heavy bool, runSD float64) [][]float64 {
	draw := func(s float64) float64 {
		if !heavy {
			return s * rng.NormFloat64()
		}
		x := s * rng.ExpFloat64() / math.Sqrt2
		if rng.IntN(2) == 0 {
			return -x
		}
		return x
	}
	d := make([][]float64, k)
	whole := runSD * rng.NormFloat64()
	for p := range d {
		off := whole + draw(between)
		for range r {
			d[p] = append(d[p], 1+off+draw(within))
		}
	}
	return d
}

// agreement returns the fraction of trials in which a rerun's centre
// falls within the first run's interval as ci computes it.
func agreement(ci func([][]float64) (c, lo, hi float64), k, r int, between float64, heavy bool, runSD float64, trials int, seed uint64) float64 {
	rng := rand.New(rand.NewPCG(seed, 11))
	in := 0
	for range trials {
		_, lo, hi := ci(run(rng, k, r, between, 1, heavy, runSD))
		c, _, _ := ci(run(rng, k, r, between, 1, heavy, runSD))
		if lo <= c && c <= hi {
			in++
		}
	}
	return float64(in) / float64(trials)
}

func runsCI(d [][]float64) (float64, float64, float64) {
	e := Runs(d, 0.95, 0)
	return e.Center, e.Lo, e.Hi
}

// TestRerunAgreement: a rerun's figure falls within Runs's interval 95%
// of the time, whatever the offsets between processes (none, as large as
// the noise of a round, ten times it): within four standard errors with
// normal offsets and noise, and no more than two points short with
// Laplace's heavier tails. The check fails intervals that leave out the
// between-process part (Shift on every round, the old method), that
// bound the mean rather than a rerun (no room for the rerun's own error)
// or that take one degree of freedom too many (not under -short: it
// needs the long run's trials to tell).
func TestRerunAgreement(t *testing.T) {
	trials, ks, betweens := 20000, []int{4, 6}, []float64{0, 1, 10}
	if testing.Short() {
		trials, ks, betweens = 2000, []int{4}, []float64{0, 10}
	}
	se := math.Sqrt(0.95 * 0.05 / float64(trials))
	for _, heavy := range []bool{false, true} {
		for _, k := range ks {
			for _, between := range betweens {
				got := agreement(runsCI, k, 6, between, heavy, 0, trials, uint64(k*100+int(between)))
				t.Logf("K=%d, between %v, heavy tails %v: a rerun within the interval %.4f of the time", k, between, heavy, got)
				lo, hi := 0.95-4*se, 0.95+4*se
				if heavy {
					lo = 0.93 - 4*se
				}
				if got < lo || got > hi {
					t.Errorf("K=%d, between %v, heavy tails %v: a rerun falls within the interval %.4f of the time, want 0.95", k, between, heavy, got)
				}
			}
		}
	}
	planted := map[string]func([][]float64) (float64, float64, float64){
		"Shift on every round": func(d [][]float64) (float64, float64, float64) {
			var all []float64
			for _, p := range d {
				all = append(all, p...)
			}
			e := Shift(all, 0.95)
			return e.Center, e.Lo, e.Hi
		},
		"an interval for the mean": func(d [][]float64) (float64, float64, float64) {
			e := Runs(d, 0.95, 0)
			half := (e.Hi - e.Lo) / 2 / math.Sqrt2
			return e.Center, e.Center - half, e.Center + half
		},
		"one degree of freedom too many": func(d [][]float64) (float64, float64, float64) {
			e := Runs(d, 0.95, 0)
			k := len(d)
			half := (e.Hi - e.Lo) / 2 * tQuantile(0.975, k) / tQuantile(0.975, k-1)
			return e.Center, e.Center - half, e.Center + half
		},
	}
	for name, ci := range planted {
		if testing.Short() && name == "one degree of freedom too many" {
			continue // too close to 95% for the short run's trials to tell
		}
		got := agreement(ci, 4, 6, 1, false, 0, trials, 9)
		t.Logf("planted %s: a rerun within it %.4f of the time", name, got)
		if got >= 0.95-4*se {
			t.Errorf("a planted wrong interval (%s) passed: a rerun within it %.4f of the time", name, got)
		}
	}
}

// TestRunToRun: with every run moved as a whole (a moment its processes
// share) by offsets of a known spread, Runs given that spread still
// holds a rerun's figure 95% of the time (the sum of a t part and a
// known normal part is bounded, so it may cover a little more), and
// without it does not.
func TestRunToRun(t *testing.T) {
	trials := 20000
	if testing.Short() {
		trials = 2000
	}
	se := math.Sqrt(0.95 * 0.05 / float64(trials))
	for _, runSD := range []float64{0.5, 2} {
		with := func(d [][]float64) (float64, float64, float64) {
			e := Runs(d, 0.95, runSD)
			return e.Center, e.Lo, e.Hi
		}
		got := agreement(with, 5, 6, 1, false, runSD, trials, uint64(runSD*10))
		t.Logf("run-to-run spread %v: a rerun within the interval %.4f of the time", runSD, got)
		if got < 0.95-4*se || got > 0.975 {
			t.Errorf("run-to-run spread %v: a rerun within the interval %.4f of the time, want 0.95", runSD, got)
		}
		without := agreement(runsCI, 5, 6, 1, false, runSD, trials, uint64(runSD*10))
		t.Logf("without it: %.4f", without)
		if without >= 0.95-4*se {
			t.Errorf("run-to-run spread %v left out, a rerun still within the interval %.4f of the time", runSD, without)
		}
	}
}
