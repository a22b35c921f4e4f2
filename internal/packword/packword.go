// Package packword is the bit layout of package packed64's words: the
// fields of a bucket word and of a window word, and how they pack into a
// uint64. packed64 steps the words; keyed, which keeps packed64 words in its
// slots, reads their fields to tell when a word is idle and what dropping it
// forgives.
package packword

// Field widths of a bucket word: the time (high bits) and the deficit.
const (
	BucketTimeBits    = 40
	BucketDeficitBits = 24
)

// Field widths of a window word: the window start (high bits) and two
// counts.
const (
	WindowStartBits = 28
	WindowCountBits = 18
)

const (
	deficitMask = 1<<BucketDeficitBits - 1
	countMask   = 1<<WindowCountBits - 1
)

// BucketFields is a bucket word's fields. Time is below 2^40 and Deficit
// below 2^24.
type BucketFields struct {
	Time    uint64
	Deficit uint64
}

// PackBucket returns the word holding f; bits beyond the field widths are
// dropped.
func PackBucket(f BucketFields) uint64 {
	return f.Time<<BucketDeficitBits | f.Deficit&deficitMask
}

// UnpackBucket returns the fields of w.
func UnpackBucket(w uint64) BucketFields {
	return BucketFields{Time: w >> BucketDeficitBits, Deficit: w & deficitMask}
}

// WindowFields is a window word's fields. Start is below 2^28, Prev and Cur
// below 2^18.
type WindowFields struct {
	Start     uint64
	Prev, Cur uint64
}

// PackWindow returns the word holding f; bits beyond the field widths are
// dropped.
func PackWindow(f WindowFields) uint64 {
	return f.Start<<(2*WindowCountBits) | (f.Prev&countMask)<<WindowCountBits | f.Cur&countMask
}

// UnpackWindow returns the fields of w.
func UnpackWindow(w uint64) WindowFields {
	return WindowFields{Start: w >> (2 * WindowCountBits), Prev: w >> WindowCountBits & countMask, Cur: w & countMask}
}
