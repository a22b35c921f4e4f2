package path128

import (
	"slices"
	"testing"
)

func TestParseRoundTrip(t *testing.T) {
	for p := Fallback; p <= LLSC; p++ {
		got, err := Parse(p.String())
		if err != nil || got != p {
			t.Errorf("Parse(%q) = %v, %v; want %v", p.String(), got, err, p)
		}
	}
	if _, err := Parse("cx17"); err == nil {
		t.Error(`Parse("cx17") succeeded`)
	}
}

func TestSupportedEndsWithFallback(t *testing.T) {
	s := Supported()
	if len(s) == 0 || s[len(s)-1] != Fallback {
		t.Fatalf("Supported() = %v, want it to end with fallback", s)
	}
	if EnvErr == nil && Active != s[0] && !slices.Contains(s, Active) {
		t.Fatalf("Active %v is not supported (%v)", Active, s)
	}
}

// TestForceUnsupported: asking for a path this CPU lacks selects the
// fallback (which never faults) and reports an error.
func TestForceUnsupported(t *testing.T) {
	saved := Active
	defer func() { Active = saved }()
	for p := Fallback; p <= LLSC; p++ {
		err := Force(p)
		if slices.Contains(Supported(), p) {
			if err != nil || Active != p {
				t.Errorf("Force(%v) = %v, Active %v", p, err, Active)
			}
			continue
		}
		if err == nil || Active != Fallback {
			t.Errorf("Force(unsupported %v) = %v, Active %v; want an error and fallback", p, err, Active)
		}
	}
}
