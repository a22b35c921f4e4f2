package redis

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestMuldiv runs the scripts' exact multiply-divide on a real server over
// its whole domain, edges first, against big integers: a, b < 2^52,
// m < 2^50, quotient < 2^52, a negative for smuldiv.
func TestMuldiv(t *testing.T) {
	_, c := server(t)
	script := luaPrelude + `
init()
local out = {}
for i = 1, #ARGV, 3 do
  local q, r = smuldiv(tonumber(ARGV[i]), tonumber(ARGV[i+1]), tonumber(ARGV[i+2]))
  out[#out+1] = string.format('%d', q)
  out[#out+1] = string.format('%d', r)
end
return out`
	rng := rand.New(rand.NewPCG(1, 2))
	const A, M = 1<<52 - 1, 1<<50 - 1
	type tri struct{ a, b, m int64 }
	var cases []tri
	add := func(a, b, m int64) {
		// keep the quotient below 2^52
		q := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
		q.Abs(q).Quo(q, big.NewInt(m))
		if q.Cmp(big.NewInt(1<<52)) < 0 {
			cases = append(cases, tri{a, b, m})
		}
	}
	for _, a := range []int64{0, 1, 2, 1<<26 - 1, 1 << 26, 1<<52 - 1, 1<<51 + 12345} {
		for _, m := range []int64{1, 2, 3, 7, 1<<26 - 1, 1 << 26, 1<<26 + 1, 999999999, 1<<48 - 1, M} {
			for _, b := range []int64{0, 1, m - 1, m, m / 2, 1<<48 - 1, 1<<52 - 1} {
				if b >= 0 {
					add(a, b, m)
					add(-a, b, m)
				}
			}
		}
	}
	for len(cases) < 30000 {
		m := 1 + rng.Int64N(int64(1)<<(1+rng.IntN(50)))
		if m > M {
			m = M
		}
		b := rng.Int64N(int64(1) << (1 + rng.IntN(52)))
		var a int64
		switch rng.IntN(3) {
		case 0:
			a = rng.Int64N(A + 1)
		case 1:
			a = rng.Int64N(int64(1) << (1 + rng.IntN(52)))
		default:
			a = A - rng.Int64N(1000)
		}
		if rng.IntN(2) == 0 {
			a = -a
		}
		add(a, b, m)
	}
	for i := 0; i < len(cases); i += 3000 {
		batch := cases[i:min(i+3000, len(cases))]
		var args []any
		for _, x := range batch {
			args = append(args, x.a, x.b, x.m)
		}
		v, err := c.Eval(bg, script, nil, args...).StringSlice()
		if err != nil {
			t.Fatal(err)
		}
		for k, x := range batch {
			p := new(big.Int).Mul(big.NewInt(x.a), big.NewInt(x.b))
			q, r := new(big.Int).DivMod(p, big.NewInt(x.m), new(big.Int)) // Euclidean: r >= 0
			if got := fmt.Sprint(q, r); got != v[2*k]+" "+v[2*k+1] {
				t.Fatalf("smuldiv(%d, %d, %d) = %s %s, want %s", x.a, x.b, x.m, v[2*k], v[2*k+1], got)
			}
		}
	}
	t.Logf("%d cases", len(cases))
	_ = strconv.Itoa
}
