// Package ratio reads a float64 rate as an exact fraction, for the
// float-rate constructors.
package ratio

import "math/big"

// Fraction returns num/den with den <= 2^32 and num < 2^62, within 2^-50 of x
// relatively, from x's continued fraction: the first convergent that close,
// or the last one whose denominator fits. So 0.5, 1e-3 and 1.0/3 become 1/2,
// 1/1000 and 1/3 exactly. ok is false for x <= 0, NaN, infinities, and for x
// with no such fraction (below about 2^-32 or at or above 2^62).
func Fraction(x float64) (num, den uint64, ok bool) {
	if !(x > 0) || x > 1<<63 {
		return 0, 0, false
	}
	r := new(big.Rat).SetFloat64(x)
	h0, h1 := big.NewInt(0), big.NewInt(1) // numerators h[k-2], h[k-1]
	k0, k1 := big.NewInt(1), big.NewInt(0) // denominators
	rest := new(big.Rat).Set(r)
	tol := new(big.Rat).Mul(r, new(big.Rat).SetFrac64(1, 1<<50))
	for range 64 {
		a := new(big.Int).Quo(rest.Num(), rest.Denom())
		h := new(big.Int).Add(new(big.Int).Mul(a, h1), h0)
		k := new(big.Int).Add(new(big.Int).Mul(a, k1), k0)
		if k.BitLen() > 32 {
			break
		}
		h0, h1, k0, k1 = h1, h, k1, k
		diff := new(big.Rat).Sub(r, new(big.Rat).SetFrac(h, k))
		frac := new(big.Rat).Sub(rest, new(big.Rat).SetInt(a))
		if diff.Abs(diff).Cmp(tol) <= 0 || frac.Sign() == 0 {
			break
		}
		rest.Inv(frac)
	}
	if h1.Sign() == 0 || h1.BitLen() > 62 || k1.Sign() == 0 {
		return 0, 0, false
	}
	return h1.Uint64(), k1.Uint64(), true
}
