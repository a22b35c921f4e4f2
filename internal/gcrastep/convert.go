package gcrastep

import "math/big"

// Convert carries TAT x of ps over to Params to at now: the events owed at
// now (the lead of x over now, in ps's intervals) are owed from now on in
// to's intervals; a TAT not ahead of now is kept as a time, so a stale now
// finds the same TAT. The result is rounded up to a step of to and capped
// at most. The zero ps (a limiter that never admitted) converts to the
// zero State, a full limiter.
func (ps *Params) Convert(x State, now int64, to *Params, most uint64) State {
	if ps.J == 0 {
		return 0
	}
	ns := func(steps uint64, p *Params) *big.Rat { // steps*p/e ns
		return new(big.Rat).SetFrac(new(big.Int).Mul(new(big.Int).SetUint64(steps), new(big.Int).SetUint64(p.p)),
			new(big.Int).SetUint64(p.e))
	}
	u := new(big.Rat).SetInt(new(big.Int).SetUint64(uint64(now) ^ signBit)) // now in ns
	tat := ns(uint64(x), ps)
	if lead := new(big.Rat).Sub(tat, u); lead.Sign() > 0 {
		// lead/T events owed, each to's interval T' from now: u + lead*T'/T.
		lead.Mul(lead, ns(to.J, to))
		tat = lead.Add(u, lead.Quo(lead, ns(ps.J, ps)))
	}
	// In steps of to: tat*e/p, rounded up.
	q := tat.Mul(tat, new(big.Rat).SetFrac(new(big.Int).SetUint64(to.e), new(big.Int).SetUint64(to.p)))
	n, r := new(big.Int).QuoRem(q.Num(), q.Denom(), new(big.Int))
	if r.Sign() != 0 {
		n.Add(n, big.NewInt(1))
	}
	if !n.IsUint64() || n.Uint64() > most {
		return State(most)
	}
	return State(n.Uint64())
}
