package nanotime

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestSinceFollowsSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := Since()
		a, na := clock(), Now()
		time.Sleep(time.Hour)
		b, nb := clock(), Now()
		if got := time.Duration(b - a); got != time.Hour {
			t.Errorf("Since measured %v across a fake hour", got)
		}
		// Now reads real time, so the fake hour is invisible to it.
		if got := time.Duration(nb - na); got >= time.Hour {
			t.Errorf("Now measured %v across a fake hour: it is expected to ignore synctest", got)
		}
	})
}

func TestSinceStartsNearZero(t *testing.T) {
	clock := Since()
	a := clock()
	time.Sleep(time.Millisecond)
	b := clock()
	if a < 0 || a > int64(time.Second) {
		t.Errorf("first reading %d, want near 0", a)
	}
	if b-a < int64(time.Millisecond) {
		t.Errorf("Since measured %v across a 1ms sleep", time.Duration(b-a))
	}
}

func BenchmarkSince(b *testing.B) {
	b.ReportAllocs()
	clock := Since()
	var s int64
	for b.Loop() {
		s += clock()
	}
	sink = s
}
