package bench

import "testing"

// TestAccuracyMeasure: the mutex bucket, exact up to float rounding at
// these magnitudes, admits what the exact reference admits and never
// exceeds the bound; the measurement itself must be able to see excess.
func TestAccuracyMeasure(t *testing.T) {
	for _, s := range Schedules(20000)[:2] {
		o := s.Run(newMutexBucket(float64(s.Rate), s.Burst))
		if o.Excess > 1e-6 || o.Admitted > o.Exact {
			t.Errorf("%s: mutex bucket: %+v", s.Name, o)
		}
		o = s.Run(newMutexBucket(float64(s.Rate), 2*s.Burst))
		if o.Excess < float64(s.Burst)/2 {
			t.Errorf("%s: a bucket of twice the burst shows an excess of only %v", s.Name, o.Excess)
		}
	}
}

// TestTokenBucketsKeepBound: cellrate's token buckets promise the bound over
// the times callers pass, in any order, so on every schedule, the stale one
// too, they show no excess beyond packed64's two time units (8ns here, at
// most 8e-6 tokens).
func TestTokenBucketsKeepBound(t *testing.T) {
	buckets := map[string]bool{"cellrate-bucket": true, "cellrate-rate": true, "cellrate-striped": true, "cellrate-gcra": true, "cellrate-packed64-bucket": true}
	found := 0
	for _, im := range ours {
		if !buckets[im.Name] {
			continue
		}
		found++
		for _, s := range Schedules(20000) {
			if o := s.Run(im.New(float64(s.Rate), s.Burst)); o.Excess > 1e-5 {
				t.Errorf("%s on %s: excess %v", im.Name, s.Name, o.Excess)
			}
		}
	}
	if found != len(buckets) {
		t.Fatalf("found %d of the %d token buckets", found, len(buckets))
	}
}
