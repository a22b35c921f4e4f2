package bound

import (
	"fmt"
	"slices"
)

// CheckWindow returns an error naming the first window (t-w, t] whose uses'
// cost exceeds limit, or nil: the sliding-window bound, at most limit in
// any half-open interval of length w ns (so in any closed interval of
// length w-1). Times may be anywhere in int64; uses is not modified.
func CheckWindow(uses []Use, limit int64, w uint64) error {
	u := slices.Clone(uses)
	slices.SortStableFunc(u, func(a, b Use) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
	var sum int64
	i := 0
	for j, x := range u {
		sum += x.Cost
		for uint64(x.At)-uint64(u[i].At) >= w { // x.At - u[i].At, exact in 64 bits unsigned
			sum -= u[i].Cost
			i++
		}
		if sum > limit && (j+1 == len(u) || u[j+1].At != x.At) {
			return fmt.Errorf("cost %d in (%d-%d, %d] exceeds %d: %v", sum, x.At, w, x.At, limit, u[i:j+1])
		}
	}
	return nil
}
