package gcra

import (
	"errors"
	"testing"
	"time"

	"github.com/cellrate/cellrate/limit"
)

// TestBurstPeriodPast64Bits: burst*period may pass 64 bits while
// burst*period/events fits; the range check divides in 128 bits. At 2^20+1
// events per 2^44 ns, a burst of 2^20 lasts under 2^44 ns and is taken, and
// the largest burst, 2^38+2^18, makes burst*T exactly 2^62 ns.
func TestBurstPeriodPast64Bits(t *testing.T) {
	const events, period = 1<<20 + 1, time.Duration(1 << 44)
	ps, err := NewParams(events, period, 1<<20)
	if err != nil || ps.Burst() != 1<<20 {
		t.Fatalf("NewParams(2^20+1, 2^44, 2^20) = %v, %v", ps.Burst(), err)
	}
	l, _ := NewFromParams(ps)
	if r, err := l.AllowNAt(0, 1<<20); !r.OK || err != nil || l.AllowAt(0) {
		t.Fatalf("the whole burst at once: %+v, %v", r, err)
	}
	const most = 1<<38 + 1<<18
	if _, err := NewParams(events, period, most); err != nil {
		t.Fatalf("burst 2^38+2^18 (burst*T = 2^62 ns): %v", err)
	}
	var pe *limit.ParamError
	if _, err := NewParams(events, period, most+1); !errors.As(err, &pe) || pe.Param != "burst" || pe.Max != int64(most) {
		t.Fatalf("burst 2^38+2^18+1: %v", err)
	}
	if _, err := NewParams(events, period, 1<<62); !errors.As(err, &pe) || pe.Max != int64(most) {
		t.Fatalf("burst 2^62 (burst*period/events past 64 bits): %v", err)
	}
}
