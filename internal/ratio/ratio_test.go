package ratio

import (
	"math"
	"testing"
)

func TestFraction(t *testing.T) {
	for _, c := range []struct {
		x        float64
		num, den uint64
		ok       bool
	}{
		{0.5, 1, 2, true},
		{1e-3, 1, 1000, true},
		{1.0 / 3, 1, 3, true},
		{100, 100, 1, true},
		{1e9, 1e9, 1, true},
		{0, 0, 0, false},
		{-1, 0, 0, false},
		{math.NaN(), 0, 0, false},
		{math.Inf(1), 0, 0, false},
		{1 << 62, 0, 0, false},
		{1e-12, 0, 0, false},
	} {
		num, den, ok := Fraction(c.x)
		if num != c.num || den != c.den || ok != c.ok {
			t.Errorf("Fraction(%v) = %d/%d %v, want %d/%d %v", c.x, num, den, ok, c.num, c.den, c.ok)
		}
	}
	// Within 2^-50 relatively, or, where the next convergent's denominator
	// passes 2^32, within 1/(den*2^32) (a convergent's error bound).
	for x := 1e-9; x < 1e18; x *= 1.37 {
		num, den, ok := Fraction(x)
		if !ok {
			continue
		}
		diff := math.Abs(float64(num)/float64(den) - x)
		if rel := diff / x; rel > 0x1p-49 && diff > 1/(float64(den)*0x1p32) {
			t.Errorf("Fraction(%v) = %d/%d, %v off", x, num, den, rel)
		}
	}
}
