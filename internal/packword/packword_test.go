package packword

import "testing"

// TestRoundTrip packs fields at the edges of their widths and reads them
// back; a bit beyond a field's width is dropped, never carried into the
// next field.
func TestRoundTrip(t *testing.T) {
	for _, f := range []BucketFields{{0, 0}, {1, 1}, {1<<BucketTimeBits - 1, 1<<BucketDeficitBits - 1}, {5, 3}} {
		if got := UnpackBucket(PackBucket(f)); got != f {
			t.Errorf("bucket %+v came back %+v", f, got)
		}
	}
	if got := UnpackBucket(PackBucket(BucketFields{Time: 2, Deficit: 1 << BucketDeficitBits})); got != (BucketFields{Time: 2}) {
		t.Errorf("an oversized deficit reached the time: %+v", got)
	}
	if w := PackBucket(BucketFields{Time: 1}); w != 1<<BucketDeficitBits {
		t.Errorf("time 1 packs to %#x", w)
	}
	for _, f := range []WindowFields{{0, 0, 0}, {1, 2, 3}, {1<<WindowStartBits - 1, 1<<WindowCountBits - 1, 1<<WindowCountBits - 1}} {
		if got := UnpackWindow(PackWindow(f)); got != f {
			t.Errorf("window %+v came back %+v", f, got)
		}
	}
	if got := UnpackWindow(PackWindow(WindowFields{Start: 1, Prev: 1 << WindowCountBits, Cur: 1 << WindowCountBits})); got != (WindowFields{Start: 1}) {
		t.Errorf("oversized counts reached another field: %+v", got)
	}
	if w := PackWindow(WindowFields{Start: 1, Prev: 1}); w != 1<<(2*WindowCountBits)|1<<WindowCountBits {
		t.Errorf("start 1, prev 1 packs to %#x", w)
	}
}
