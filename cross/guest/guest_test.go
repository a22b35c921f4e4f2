package guest

import (
	"testing"
	"time"
)

func TestMarkersRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Line
	}{
		{Begin(3, "github.com/x/y"), Line{Kind: "begin", Index: 3}},
		{End(7, 66, 1500*time.Millisecond), Line{Kind: "end", Index: 7, Exit: 66, Elapsed: 1500 * time.Millisecond}},
		{End(0, -1, 0), Line{Kind: "end", Index: 0, Exit: -1}},
		{"\r" + Done() + "\r", Line{Kind: "done"}},
	} {
		got, ok := Parse(tc.line)
		if !ok || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, true", tc.line, got, ok, tc.want)
		}
	}
}

func TestParseRejectsOtherLines(t *testing.T) {
	for _, s := range []string{
		"", "--- PASS: TestX (0.00s)", "@@cellrate-guest", "@@cellrate-guest end x exit=1",
		"@@cellrate-guest end 1 exit=", "@@cellrate-guest end 1 exit=0", "@@cellrate-guest end 1 exit=0 ms=x",
		"@@cellrate-guestdone", "ok @@cellrate-guest done",
	} {
		if l, ok := Parse(s); ok {
			t.Errorf("Parse(%q) = %+v, true; want false", s, l)
		}
	}
}
