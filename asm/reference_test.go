package asm

import "testing"

// TestReference checks each reference function on a pair whose halves
// differ, so a swapped half or a write on a failed compare shows.
func TestReference(t *testing.T) {
	p := &[2]uint64{1, 2}
	if RefCas(p, 1, 3, 7, 8) || RefCas(p, 3, 2, 7, 8) || *p != [2]uint64{1, 2} {
		t.Fatalf("a mismatched RefCas changed the pair or reported true: %v", *p)
	}
	if !RefCas(p, 1, 2, 3, 4) || *p != [2]uint64{3, 4} {
		t.Fatalf("RefCas(1, 2 -> 3, 4) left %v", *p)
	}
	if v1, v2 := RefLoad(p); v1 != 3 || v2 != 4 {
		t.Fatalf("RefLoad = %d, %d, want 3, 4", v1, v2)
	}
	RefStore(p, 5, 6)
	if *p != [2]uint64{5, 6} {
		t.Fatalf("RefStore(5, 6) left %v", *p)
	}
	if o1, o2 := RefSwap(p, 9, 10); o1 != 5 || o2 != 6 || *p != [2]uint64{9, 10} {
		t.Fatalf("RefSwap(9, 10) = %d, %d leaving %v, want 5, 6 leaving [9 10]", o1, o2, *p)
	}
}
