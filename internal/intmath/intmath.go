// Package intmath holds the small integer helpers the limiters share.
package intmath

import (
	"math"
	"math/bits"
)

// FloorDiv returns a/b rounded toward minus infinity, for b in [1, 2^63).
func FloorDiv(a int64, b uint64) int64 {
	q, r := a/int64(b), a%int64(b)
	if r < 0 {
		q--
	}
	return q
}

// SatAdd returns a+b clamped to the int64 range.
func SatAdd(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// GCD returns the greatest common divisor of a and b (GCD(a, 0) = a).
func GCD(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// MulDiv returns q = a*b/c and r = a*b%c, exactly: the product is kept in
// 128 bits, so it may exceed 64 bits as long as the quotient does not. ok is
// false (q and r 0) when the quotient needs more than 64 bits or c is 0.
func MulDiv(a, b, c uint64) (q, r uint64, ok bool) {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return 0, 0, false
	}
	q, r = bits.Div64(hi, lo, c)
	return q, r, true
}
