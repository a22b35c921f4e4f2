package bench

import (
	"math/rand/v2"
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
// units at one instant; and the Poisson schedule after 100 years of
// uptime, where float64 nanosecond arithmetic has lost its low bits.
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
	return []Schedule{
		{"poisson-3x", rate, burst, poisson(0)},
		{"bursts", rate, burst, bursts},
		{"poisson-3x-after-100y", rate, burst, poisson(century)},
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
	// best is the least of sum(n before i)*period - t_i over admitted i.
	var sum, best int64
	first := true
	base := s.Requests[0].At
	for _, q := range s.Requests {
		if next := max(tat, q.At) + q.N*period; next <= q.At+s.Burst*period {
			tat = next
			o.Exact += q.N
		}
		if !l.AllowNAt(q.At, q.N) {
			continue
		}
		t := q.At - base
		if v := sum*period - t; first || v < best {
			best, first = v, false
		}
		sum += q.N
		if excess := float64(sum*period-t-best)/float64(period) - float64(s.Burst); excess > o.Excess {
			o.Excess = excess
		}
	}
	o.Admitted = sum
	return o
}
