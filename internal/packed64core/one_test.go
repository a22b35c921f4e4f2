package packed64core

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestStepOneIsStep: StepOne decides as Step(w, now, ref, 1) on random
// words, times and references.
func TestStepOneIsStep(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		bp, err := NewBucketParams(1+r.Int64N(1000), time.Duration(1+r.Int64N(int64(time.Hour))), 1+r.Int64N(MaxBurst))
		if err != nil {
			continue
		}
		wp, err := NewWindowParams(1+r.Int64N(MaxWindowLimit), time.Duration(1+r.Int64N(int64(time.Hour))))
		if err != nil {
			t.Fatal(err)
		}
		for range 200 {
			now, ref := r.Int64N(1<<50), r.Int64N(1<<50)
			bw := BucketWord(r.Uint64())
			if r.IntN(2) == 0 {
				bw = packBucket(bucketFields{Time: uint64(now>>bp.clk.shift) - r.Uint64N(1000), Deficit: r.Uint64N(bp.cap + 2)})
				ref = now + r.Int64N(1000)
			}
			want, res, _ := bp.Step(BucketState{bw, ref}, now, 1)
			if got, ok := bp.StepOne(bw, now, ref); ok != res.OK || ok && got != want.Word {
				t.Fatalf("bucket %+v: StepOne(%#x, %d, %d) = %#x %v, Step %#x %+v", bp, bw, now, ref, got, ok, want, res)
			}
			ww := WindowWord(r.Uint64())
			wantW, resW, _ := wp.Step(WindowState{ww, ref}, now, 1)
			if got, ok := wp.StepOne(ww, now, ref); ok != resW.OK || ok && got != wantW.Word {
				t.Fatalf("window: StepOne(%#x, %d, %d) = %#x %v, Step %#x %+v", ww, now, ref, got, ok, wantW, resW)
			}
		}
	}
}
