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
