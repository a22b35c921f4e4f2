package bench

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"time"
)

// A Request is one call in a schedule: n units at time At (ns).
type Request struct{ At, N int64 }

// A Schedule is a named sequence of requests in time order, offered to a
// limiter of Rate units per second with bursts of Burst.
type Schedule struct {
	Name     string
	Rate     int64
	Burst    int64
	Requests []Request
}

// Schedules returns the accuracy schedules, n requests each: Poisson
// arrivals at three times the rate; bursts of up to 100 requests of 1 to 5
// units at one instant; the Poisson schedule after 100 years of uptime,
// where float64 nanosecond arithmetic has lost its low bits; and the
// Poisson schedule with each time read up to 2ms early, as goroutines that
// read the clock and then wait for a CPU deliver them: out of order.
func Schedules(n int) []Schedule {
	const rate, burst = 1000, 50
	r := rand.New(rand.NewPCG(1, 2))
	poisson := func(start int64) []Request {
		reqs := make([]Request, n)
		t := start
		for i := range reqs {
			t += int64(r.ExpFloat64() * 1e9 / (3 * rate))
			reqs[i] = Request{At: t, N: 1}
		}
		return reqs
	}
	bursts := make([]Request, 0, n)
	for t := int64(0); len(bursts) < n; {
		t += int64(r.ExpFloat64() * 1e9 / rate * 50)
		for k := 1 + r.IntN(100); k > 0 && len(bursts) < n; k-- {
			bursts = append(bursts, Request{At: t, N: 1 + r.Int64N(5)})
		}
	}
	century := int64(100 * 365 * 24 * time.Hour)
	stale := poisson(0)
	for i := range stale {
		stale[i].At -= r.Int64N(int64(2 * time.Millisecond))
	}
	return []Schedule{
		{"poisson-3x", rate, burst, poisson(0)},
		{"bursts", rate, burst, bursts},
		{"poisson-3x-after-100y", rate, burst, poisson(century)},
		{"poisson-3x-stale", rate, burst, stale},
	}
}

// An Outcome is how one limiter did on one schedule.
type Outcome struct {
	// Admitted units, and the units an exact token bucket admitted
	// greedily from the same requests.
	Admitted, Exact int64
	// Excess is the largest amount, over every stretch of time [t1, t2],
	// by which the units admitted in it exceeded Burst + Rate*(t2-t1): 0
	// for a limiter that never admits more than the math allows.
	Excess float64
}

// Run offers s to l, one request after another, and measures the outcome.
func (s Schedule) Run(l Limiter) Outcome {
	var o Outcome
	period := int64(time.Second) / s.Rate
	tat := s.Requests[0].At // exact GCRA: theoretical arrival time
	var admitted []Request
	for _, q := range s.Requests {
		if next := max(tat, q.At) + q.N*period; next <= q.At+s.Burst*period {
			tat = next
			o.Exact += q.N
		}
		if l.AllowNAt(q.At, q.N) {
			admitted = append(admitted, q)
			o.Admitted += q.N
		}
	}
	o.Excess = excess(admitted, s.Burst, period)
	return o
}

// excess returns the most by which the units admitted with times in any
// [t1, t2] exceed burst + (t2-t1)/period: with S the running sum over the
// requests sorted by time, the largest (S_j*period - t_j) - (S_(i-1)*period
// - t_i) over i <= j, divided by period, less burst.
func excess(admitted []Request, burst, period int64) float64 {
	if len(admitted) == 0 {
		return 0
	}
	slices.SortStableFunc(admitted, func(a, b Request) int { return cmp.Compare(a.At, b.At) })
	base := admitted[0].At
	var sum, best, most int64
	for i, q := range admitted {
		t := q.At - base
		if v := sum*period - t; i == 0 || v < best {
			best = v
		}
		sum += q.N
		most = max(most, sum*period-t-best)
	}
	return max(0, float64(most)/float64(period)-float64(burst))
}
