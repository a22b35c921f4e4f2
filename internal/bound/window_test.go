package bound

import "testing"

func TestCheckWindow(t *testing.T) {
	const minT, maxT = -1 << 63, 1<<63 - 1
	// 2 per 100ns: uses 100ns apart are in different windows, 99ns apart in one.
	for _, c := range []struct {
		uses []Use
		bad  bool
	}{
		{[]Use{{0, 1, ""}, {0, 1, ""}, {100, 1, ""}, {100, 1, ""}}, false},
		{[]Use{{0, 1, ""}, {0, 1, ""}, {99, 1, ""}}, true},
		{[]Use{{99, 1, ""}, {0, 2, ""}}, true},
		{[]Use{{5, 3, ""}}, true},
		{[]Use{{minT, 2, ""}, {maxT, 2, ""}}, false},
		{[]Use{{minT, 2, ""}, {minT + 99, 1, ""}}, true},
		{[]Use{{maxT - 99, 2, ""}, {maxT, 1, ""}}, true},
		{[]Use{{maxT - 100, 2, ""}, {maxT, 2, ""}, {0, 0, ""}}, false},
	} {
		if err := CheckWindow(c.uses, 2, 100); (err != nil) != c.bad {
			t.Errorf("%v: %v", c.uses, err)
		}
	}
}
