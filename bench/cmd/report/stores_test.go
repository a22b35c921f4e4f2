package main

import (
	"strings"
	"testing"
)

// TestStoresPlan: the stores group has a pair per store, each labelled in
// plain words, none empty or repeated.
func TestStoresPlan(t *testing.T) {
	specs := planStores()
	if len(specs) != 1 || len(specs[0].pairs) != 3 {
		t.Fatalf("planStores: %d groups, want 1 of 3 pairs", len(specs))
	}
	seen := map[string]bool{}
	for _, p := range specs[0].pairs {
		if p.label == "" || seen[p.label] || !strings.Contains(p.label, " vs ") {
			t.Errorf("pair label %q: empty, repeated or not ours vs the shipped store", p.label)
		}
		seen[p.label] = true
	}
}
