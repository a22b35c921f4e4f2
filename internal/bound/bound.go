// Package bound checks recorded admissions against the rate limiter bound:
// the cost admitted at times in any closed interval of length t is at most
// burst + rate*t (or burst + rate*(t + slack), for limiters that round time).
// It is for tests, and exact (integer, 128-bit).
package bound

import (
	"fmt"
	"math/bits"
	"slices"
)

// Use is a cost admitted at a time (ns).
type Use struct {
	At, Cost int64
	Kind     string // what admitted it, for the error message
}

// Check returns an error naming the first interval over which uses exceed
// burst + rate*t, with rate = num/den cost per ns, or nil. It checks every
// interval whose ends are use times (the worst ones are among them), in
// O(n^2). Uses of cost 0 are ignored; uses is not modified.
func Check(uses []Use, burst, num, den uint64) error {
	return CheckSlack(uses, burst, 0, num, den)
}

// CheckSlack is Check with every interval taken slack ns longer: the cost in
// [t1, t2] may be at most burst + rate*(t2 - t1 + slack). The sum of costs
// must fit in 64 bits; t2 - t1 + slack is taken in 65 bits, so uses may lie
// anywhere in int64 time.
func CheckSlack(uses []Use, burst, slack, num, den uint64) error {
	u := slices.DeleteFunc(slices.Clone(uses), func(x Use) bool { return x.Cost == 0 })
	slices.SortFunc(u, func(a, b Use) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
	bh, bl := bits.Mul64(burst, den)
	for i := range u {
		if i > 0 && u[i-1].At == u[i].At {
			continue
		}
		var sum uint64
		for j := i; j < len(u); j++ {
			sum += uint64(u[j].Cost)
			if j+1 < len(u) && u[j+1].At == u[j].At {
				continue
			}
			// sum*den <= burst*den + (at_j - at_i + slack)*num
			lh, ll := bits.Mul64(sum, den)
			span, c0 := bits.Add64(uint64(u[j].At-u[i].At), slack, 0)
			dh, dl := bits.Mul64(span, num)
			dh, c1 := bits.Add64(dh, c0*num, 0) // the span's 2^64 bit
			rl, c := bits.Add64(bl, dl, 0)
			rh, c2 := bits.Add64(bh, dh, c)
			if c1|c2 == 0 && (lh > rh || (lh == rh && ll > rl)) {
				return fmt.Errorf("cost %d admitted in [%d, %d] (%d ns, slack %d ns) exceeds %d + %d/%d per ns: %v",
					sum, u[i].At, u[j].At, u[j].At-u[i].At, slack, burst, num, den, u[i:j+1])
			}
		}
	}
	return nil
}
