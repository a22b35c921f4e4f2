package paired

import (
	"math"
	"slices"
)

// An Estimate is the location of paired differences (or of log ratios,
// for Ratio) with its confidence interval: the Hodges-Lehmann estimate
// (the median of the Walsh averages) and the interval the Wilcoxon
// signed-rank test inverts to, at its exact null distribution. It is the
// one-sample form of benchstat's Mann-Whitney method, which fits paired
// rounds: each round's two measurements saw the same machine.
type Estimate struct {
	Center, Lo, Hi float64
	// N is the number of rounds; Level the interval's nominal coverage,
	// Achieved the coverage the discrete distribution gives (at least
	// Level). With too few rounds for Level there is no interval: Lo and
	// Hi are infinite and Achieved is 0.
	N               int
	Level, Achieved float64
	// Procs is the number of processes the rounds came from (Runs); 0
	// for Shift, which treats the rounds as one process's.
	Procs int
}

// Shift estimates the location of d, one difference per round (for
// example ns/op of one implementation less the other's in the same round).
func Shift(d []float64, level float64) Estimate {
	w := walsh(d)
	e := Estimate{N: len(d), Level: level, Lo: math.Inf(-1), Hi: math.Inf(1), Center: math.NaN()}
	if len(w) == 0 {
		return e
	}
	e.Center = median(w)
	k, achieved := rankBound(len(d), level)
	if k > 0 {
		e.Lo, e.Hi, e.Achieved = w[k-1], w[len(w)-k], achieved
	}
	return e
}

// Ratio estimates num/den from one pair per round: Shift on the rounds'
// log ratios, brought back by exp, so that the interval of den/num is the
// reciprocal of this one.
func Ratio(num, den []float64, level float64) Estimate {
	n := min(len(num), len(den))
	d := make([]float64, n)
	for i := range d {
		d[i] = math.Log(num[i] / den[i])
	}
	e := Shift(d, level)
	e.Center, e.Lo, e.Hi = math.Exp(e.Center), math.Exp(e.Lo), math.Exp(e.Hi)
	return e
}

// Diff estimates a-b from one pair per round.
func Diff(a, b []float64, level float64) Estimate {
	n := min(len(a), len(b))
	d := make([]float64, n)
	for i := range d {
		d[i] = a[i] - b[i]
	}
	return Shift(d, level)
}

// Excludes reports whether the interval lies wholly on one side of v: a
// difference from v is shown at the interval's level.
func (e Estimate) Excludes(v float64) bool { return e.Lo > v || e.Hi < v }

// walsh returns the sorted Walsh averages of x: (x[i]+x[j])/2 for i <= j.
func walsh(x []float64) []float64 {
	w := make([]float64, 0, len(x)*(len(x)+1)/2)
	for i := range x {
		for j := i; j < len(x); j++ {
			w = append(w, (x[i]+x[j])/2)
		}
	}
	slices.Sort(w)
	return w
}

func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// rankBound returns the k for which the k-th smallest and the k-th
// largest of n's Walsh averages bound an interval of coverage at least
// level, the largest such k (0 if n is too small for level), and the
// coverage it achieves: k-1 is the largest w with P(W+ <= w) <= (1-level)/2
// under the signed-rank statistic's null distribution.
func rankBound(n int, level float64) (int, float64) {
	cdf := signedRankCDF(n)
	alpha := (1 - level) / 2
	k := 0
	for k < len(cdf) && cdf[k] <= alpha {
		k++
	}
	if k == 0 {
		return 0, 0
	}
	return k, 1 - 2*cdf[k-1]
}

// signedRankCDF returns P(W+ <= w) for w = 0 .. n(n+1)/2, where W+ is the
// sum of the ranks 1..n each taken with probability 1/2.
func signedRankCDF(n int) []float64 {
	m := n * (n + 1) / 2
	p := make([]float64, m+1)
	p[0] = 1
	for r := 1; r <= n; r++ {
		for w := m; w >= r; w-- {
			p[w] = (p[w] + p[w-r]) / 2
		}
		for w := r - 1; w >= 0; w-- {
			p[w] /= 2
		}
	}
	for w := 1; w <= m; w++ {
		p[w] += p[w-1]
	}
	return p
}
