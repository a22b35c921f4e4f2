package paired

import (
	"math"
	"sync"
)

// Runs estimates the location of d, one difference per round, where d[p]
// holds the rounds measured in process p, and gives the interval a rerun
// of as many processes, each of as many rounds, lands in.
//
// Rounds in one process share what differs between processes (the heap's
// layout and size, the scheduler's state, the machine's load and clock
// speed at that time), so they are not independent draws of a rerun:
// the interval of Shift on all of them covers the noise within a process
// only. Runs takes each process's Hodges-Lehmann estimate, centres on
// their mean and bounds it by Student's t with the spread between the
// processes' estimates, which holds both the within and the between
// process components: with K processes whose estimates scatter with
// standard deviation s, a rerun's mean lands within
// t(K-1) · s · sqrt(1/K + 1/K) of this one's at the stated level, if the
// processes' estimates are normal (they are means of rounds; heavy tails
// widen s too). Fewer than two processes give no interval.
//
// What moves a whole run alike (its stretch of time on a shared machine:
// the other load then, the host's state) is not sampled by its
// processes; runSD is its standard deviation, in d's units, known from
// earlier reruns, and each run's error adds it as a known variance: the
// half width is the root of the sum of the squares of the t part above
// and of z · runSD · sqrt(2), z the normal quantile. Zero leaves it out.
func Runs(d [][]float64, level, runSD float64) Estimate {
	e := Estimate{Level: level, Lo: math.Inf(-1), Hi: math.Inf(1), Center: math.NaN()}
	var est []float64
	for _, p := range d {
		e.N += len(p)
		if len(p) > 0 {
			est = append(est, median(walsh(p)))
		}
	}
	e.Procs = len(est)
	if len(est) == 0 {
		return e
	}
	k := float64(len(est))
	var sum float64
	for _, v := range est {
		sum += v
	}
	e.Center = sum / k
	if len(est) < 2 {
		return e
	}
	var ss float64
	for _, v := range est {
		ss += (v - e.Center) * (v - e.Center)
	}
	procs := tQuantile((1+level)/2, len(est)-1) * math.Sqrt(ss/(k-1)) * math.Sqrt(2/k)
	run := zQuantile((1+level)/2) * runSD * math.Sqrt2
	half := math.Hypot(procs, run)
	e.Lo, e.Hi, e.Achieved = e.Center-half, e.Center+half, level
	return e
}

// RatioRuns is Runs on the rounds' log ratios num/den, process by
// process, brought back by exp; runSD is relative (0.01 for 1%).
func RatioRuns(num, den [][]float64, level, runSD float64) Estimate {
	e := Runs(perRound(num, den, func(a, b float64) float64 { return math.Log(a / b) }), level, runSD)
	e.Center, e.Lo, e.Hi = math.Exp(e.Center), math.Exp(e.Lo), math.Exp(e.Hi)
	return e
}

// DiffRuns is Runs on the rounds' differences a-b, process by process;
// runSD is relative to the difference (a run that slows both a and b by
// 1% moves a-b by 1%).
func DiffRuns(a, b [][]float64, level, runSD float64) Estimate {
	d := perRound(a, b, func(x, y float64) float64 { return x - y })
	return Runs(d, level, runSD*math.Abs(Runs(d, level, 0).Center))
}

func perRound(a, b [][]float64, f func(x, y float64) float64) [][]float64 {
	d := make([][]float64, min(len(a), len(b)))
	for p := range d {
		n := min(len(a[p]), len(b[p]))
		d[p] = make([]float64, n)
		for i := range n {
			d[p][i] = f(a[p][i], b[p][i])
		}
	}
	return d
}

var tQuantiles sync.Map // [q, df] -> the quantile

// tQuantile returns the q quantile (q > 1/2) of Student's t with df
// degrees of freedom, by bisection on its distribution function.
func tQuantile(q float64, df int) float64 {
	key := [2]float64{q, float64(df)}
	if v, ok := tQuantiles.Load(key); ok {
		return v.(float64)
	}
	v := tBisect(q, df)
	tQuantiles.Store(key, v)
	return v
}

func tBisect(q float64, df int) float64 {
	lo, hi := 0.0, 1.0
	for tCDF(hi, df) < q {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if tCDF(mid, df) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// zQuantile returns the q quantile of the standard normal distribution.
func zQuantile(q float64) float64 { return math.Sqrt2 * math.Erfinv(2*q-1) }

// tCDF returns P(T <= t) for t >= 0: 1 - I_x(df/2, 1/2)/2 with
// x = df/(df+t²), I the regularized incomplete beta function.
func tCDF(t float64, df int) float64 {
	v := float64(df)
	return 1 - betaInc(v/(v+t*t), v/2, 0.5)/2
}

// betaInc is the regularized incomplete beta function I_x(a, b), by its
// continued fraction (modified Lentz), on the side where it converges
// fast.
func betaInc(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(x, a, b) / a
	}
	return 1 - front*betaCF(1-x, b, a)/b
}

func betaCF(x, a, b float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	f := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		for _, num := range [2]float64{
			fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)),
			-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1)),
		} {
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			f *= c * d
		}
		if math.Abs(c*d-1) < 1e-15 {
			break
		}
	}
	return f
}
