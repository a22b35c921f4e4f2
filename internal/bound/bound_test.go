package bound

import "testing"

func TestCheck(t *testing.T) {
	// 3 per second, burst 2: an interval just under a third of a second
	// holds 2 + 0.999999999: two.
	for _, c := range []struct {
		uses []Use
		bad  bool
	}{
		{[]Use{{0, 1, ""}, {0, 1, ""}}, false},
		{[]Use{{0, 1, ""}, {0, 1, ""}, {0, 1, ""}}, true},
		{[]Use{{0, 2, ""}, {333333333, 1, ""}}, true},
		{[]Use{{0, 2, ""}, {333333334, 1, ""}}, false},
		{[]Use{{333333334, 1, ""}, {0, 2, ""}, {5, 0, ""}}, false},
		{[]Use{{-5, 2, ""}, {10, 1, ""}, {333333328, 1, ""}}, true},
	} {
		if err := Check(c.uses, 2, 3, 1e9); (err != nil) != c.bad {
			t.Errorf("%v: %v", c.uses, err)
		}
	}
}

func TestCheckSlack(t *testing.T) {
	// 1 per 100ns, burst 1, slack 20ns: two uses 80ns apart fit, 79ns apart
	// do not.
	for _, c := range []struct {
		uses []Use
		bad  bool
	}{
		{[]Use{{0, 1, ""}, {80, 1, ""}}, false},
		{[]Use{{0, 1, ""}, {79, 1, ""}}, true},
		{[]Use{{80, 1, ""}, {0, 1, ""}}, false},
	} {
		if err := CheckSlack(c.uses, 1, 20, 1, 100); (err != nil) != c.bad {
			t.Errorf("%v: %v", c.uses, err)
		}
	}
}

// TestCheckSlackWholeRange: intervals as long as int64 time plus the slack
// are measured in 65 bits, not wrapped to a short one. At 1 per MaxInt64 ns
// with burst 1 and slack 2, [MinInt64, MaxInt64] holds 1 + (2^64+1)/MaxInt64,
// just over 3.
func TestCheckSlackWholeRange(t *testing.T) {
	const lo, hi = -1 << 63, 1<<63 - 1
	for _, c := range []struct {
		uses []Use
		bad  bool
	}{
		{[]Use{{lo, 1, ""}, {0, 1, ""}, {hi, 1, ""}}, false},
		{[]Use{{lo, 1, ""}, {0, 2, ""}, {hi, 1, ""}}, true},
		{[]Use{{hi - 1, 1, ""}, {hi, 1, ""}}, true},
	} {
		if err := CheckSlack(c.uses, 1, 2, 1, hi); (err != nil) != c.bad {
			t.Errorf("%v: %v", c.uses, err)
		}
	}
}
