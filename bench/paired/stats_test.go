package paired

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The signed-rank distribution for n = 3: the subset sums of {1, 2, 3}
// are 0 1 2 3 3 4 5 6.
func TestSignedRankCDF(t *testing.T) {
	got := signedRankCDF(3)
	want := []float64{1, 2, 3, 5, 6, 7, 8}
	for i := range want {
		want[i] /= 8
	}
	if !slices.Equal(got, want) {
		t.Fatalf("signedRankCDF(3) = %v, want %v", got, want)
	}
}

// The critical values of the two-sided 5% signed-rank test in every
// table (k-1 = the critical value): none for n = 5, 0 for 6, 3 for 8, 8
// for 10, 13 for 12, 52 for 20, 137 for 30.
func TestRankBoundTable(t *testing.T) {
	for _, c := range []struct{ n, k int }{{5, 0}, {6, 1}, {7, 3}, {8, 4}, {10, 9}, {12, 14}, {20, 53}, {30, 138}} {
		k, achieved := rankBound(c.n, 0.95)
		if k != c.k {
			t.Errorf("n=%d: k = %d, want %d", c.n, k, c.k)
		}
		if k > 0 && (achieved < 0.95 || achieved > 0.98) {
			t.Errorf("n=%d: achieved %v", c.n, achieved)
		}
	}
	if _, a := rankBound(6, 0.95); a != 1-2.0/64 {
		t.Errorf("n=6 achieves %v, want 1-2/64", a)
	}
}

func TestShiftKnown(t *testing.T) {
	e := Shift([]float64{6, 1, 5, 2, 4, 3}, 0.95)
	if e.Center != 3.5 || e.Lo != 1 || e.Hi != 6 || e.N != 6 {
		t.Fatalf("Shift(1..6) = %+v, want centre 3.5 in [1, 6]", e)
	}
	// n = 10, k = 9: the 9th smallest and 9th largest of 55 Walsh averages
	// of 1..10 (averages of pairs: 1, 1.5, 2, 2, 2.5, 2.5, 3, 3, 3, ...).
	d := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	e = Shift(d, 0.95)
	w := walsh(d)
	if e.Center != 5.5 || e.Lo != w[8] || e.Hi != w[46] || e.Lo != 3 || e.Hi != 8 {
		t.Fatalf("Shift(1..10) = %+v, want 5.5 in [3, 8]", e)
	}
	if e := Shift([]float64{1, 2, 3, 4, 5}, 0.95); !math.IsInf(e.Lo, -1) || !math.IsInf(e.Hi, 1) || e.Achieved != 0 {
		t.Fatalf("five rounds give no 95%% interval, got %+v", e)
	}
	if !(Estimate{Lo: 1.1, Hi: 2}).Excludes(1) || (Estimate{Lo: 0.9, Hi: 2}).Excludes(1) || !(Estimate{Lo: 0.5, Hi: 0.9}).Excludes(1) {
		t.Fatal("Excludes")
	}
}

func TestRatioAndDiff(t *testing.T) {
	num := []float64{2, 4, 8, 6, 10, 12}
	den := []float64{1, 2, 4, 3, 5, 6}
	e := Ratio(num, den, 0.95)
	if math.Abs(e.Center-2) > 1e-12 || math.Abs(e.Lo-2) > 1e-12 || math.Abs(e.Hi-2) > 1e-12 {
		t.Fatalf("Ratio of constant 2 = %+v", e)
	}
	r := rand.New(rand.NewPCG(1, 2))
	a, b := make([]float64, 12), make([]float64, 12)
	for i := range a {
		a[i], b[i] = 50+10*r.Float64(), 20+10*r.Float64()
	}
	ab, ba := Ratio(a, b, 0.95), Ratio(b, a, 0.95)
	if math.Abs(ab.Lo*ba.Hi-1) > 1e-12 || math.Abs(ab.Hi*ba.Lo-1) > 1e-12 || math.Abs(ab.Center*ba.Center-1) > 1e-12 {
		t.Fatalf("Ratio(a,b) %+v is not the reciprocal of Ratio(b,a) %+v", ab, ba)
	}
	if d := Diff(a, b, 0.95); d.Lo < 20 || d.Hi > 40 || !d.Excludes(0) {
		t.Fatalf("Diff = %+v, want within [20, 40]", d)
	}
}

// coverage returns the fraction of trials in which ci's interval, from n
// rounds of a noisy difference around 1 (normal, or heavy-tailed
// lognormal noise symmetric about 1), holds 1.
func coverage(ci func([]float64) (lo, hi float64), n, trials int, seed uint64) float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	in := 0
	d := make([]float64, n)
	for tr := range trials {
		for i := range d {
			x := r.NormFloat64()
			if tr%2 == 1 { // heavy tails, still symmetric
				x = math.Copysign(math.Exp(2*r.NormFloat64())-1, x)
			}
			d[i] = 1 + x
		}
		if lo, hi := ci(d); lo <= 1 && 1 <= hi {
			in++
		}
	}
	return float64(in) / float64(trials)
}

// coverageOK reports whether ci covers as often as the signed-rank
// interval of n rounds promises, within four standard errors.
func coverageOK(t *testing.T, ci func([]float64) (lo, hi float64), n int) bool {
	const trials = 20000
	_, want := rankBound(n, 0.95)
	got := coverage(ci, n, trials, uint64(n))
	se := math.Sqrt(want * (1 - want) / trials)
	t.Logf("n=%d: coverage %.4f, promised %.4f ± %.4f", n, got, want, 4*se)
	return math.Abs(got-want) <= 4*se
}

// TestCoverage: Shift's interval holds the true shift as often as it
// promises, and the check catches intervals planted wrong by one rank
// either way, and the textbook normal interval on heavy tails.
func TestCoverage(t *testing.T) {
	shift := func(d []float64) (float64, float64) { e := Shift(d, 0.95); return e.Lo, e.Hi }
	for _, n := range []int{8, 12, 20} {
		if !coverageOK(t, shift, n) {
			t.Errorf("Shift's interval at n=%d does not cover as promised", n)
		}
	}
	planted := map[string]func([]float64) (float64, float64){
		"one rank narrower": func(d []float64) (float64, float64) {
			w := walsh(d)
			k, _ := rankBound(len(d), 0.95)
			return w[k], w[len(w)-k-1]
		},
		"one rank wider": func(d []float64) (float64, float64) {
			w := walsh(d)
			k, _ := rankBound(len(d), 0.95)
			return w[k-2], w[len(w)-k+1]
		},
		"mean ± 1.96 se": func(d []float64) (float64, float64) {
			var s, ss float64
			for _, x := range d {
				s += x
			}
			m := s / float64(len(d))
			for _, x := range d {
				ss += (x - m) * (x - m)
			}
			se := math.Sqrt(ss/float64(len(d)-1)) / math.Sqrt(float64(len(d)))
			return m - 1.96*se, m + 1.96*se
		},
	}
	for name, ci := range planted {
		if coverageOK(t, ci, 12) {
			t.Errorf("a planted wrong interval (%s) passed the coverage check", name)
		}
	}
}
