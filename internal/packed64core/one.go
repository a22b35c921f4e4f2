package packed64core

// StepOne is Step for n = 1 when only the decision is wanted, as a table of
// words deciding one unit at a time needs it: the word to store if one unit
// is admitted at now, read against ref, and whether it is. It decides
// exactly as Step(BucketState{w, ref}, now, 1) does, without computing a
// Result (Step's divisions).
func (p *BucketParams) StepOne(w BucketWord, now, ref int64) (BucketWord, bool) {
	if p.burst == 0 {
		return w, false
	}
	t, d, dn := p.refill(w, p.clk.units(now), p.clk.units(ref))
	if next, ok := p.take(t, d, dn, p.cost1); ok {
		return next, true
	}
	return w, false
}

// StepOne is Step for n = 1 when only the decision is wanted: the word to
// store if one unit is admitted at now, read against ref, and whether it
// is. It decides exactly as Step(WindowState{w, ref}, now, 1) does,
// without computing a Result.
func (p *WindowParams) StepOne(w WindowWord, now, ref int64) (WindowWord, bool) {
	if p.r.L == 0 {
		return w, false
	}
	s, e, back := p.r.Advance(p.unwrap(w, p.clk.units(ref)), p.clk.units(now))
	if back > p.r.W || !p.r.Fits(s, e, 1) {
		return w, false
	}
	s.Count(back, 1)
	return p.word(s), true
}
