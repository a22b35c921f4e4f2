package wallclock

import (
	"sync"
	"testing"
	"time"

	"github.com/cellrate/cellrate/nanotime"
)

// A step of the wall clock shows from the first conversion a second of
// monotonic time after the last reading, not before.
func TestFollowsSteps(t *testing.T) {
	wall, mono := int64(1_700_000_000e9), int64(5e9)
	o := Offset{wall: func() int64 { return wall }, mono: func() int64 { return mono }}
	if got := o.Unix(mono); got != wall {
		t.Fatalf("first conversion: %d, want %d", got, wall)
	}
	if got := o.Unix(mono + 7); got != wall+7 {
		t.Fatalf("7ns later: %d, want %d", got, wall+7)
	}
	wall += int64(time.Hour) // a step: NTP, or a machine resumed
	mono += refresh - 1
	if got, want := o.Unix(mono), wall-int64(time.Hour)+refresh-1; got != want {
		t.Fatalf("within a second of the reading: %d, want the old offset's %d", got, want)
	}
	mono++
	if got := o.Unix(mono); got != wall {
		t.Fatalf("a second after the reading: %d, want the stepped wall clock %d", got, wall)
	}
	wall -= 2 * int64(time.Hour) // stepped back
	mono += refresh
	if got := o.Unix(mono + 3); got != wall+3 {
		t.Fatalf("stepped back: %d, want %d", got, wall+3)
	}
}

// With the real clocks a conversion of nanotime.Now is time.Now, to
// within the time between the readings (a goroutine preempted between
// take's two readings, under qemu on a loaded machine, can add a few ms:
// 100ms of slack), from many goroutines at once.
func TestRealClocks(t *testing.T) {
	const slack = int64(100 * time.Millisecond)
	var o Offset
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				before := time.Now().UnixNano()
				got := o.Unix(nanotime.Now())
				if after := time.Now().UnixNano(); got < before-slack || got > after+slack {
					t.Errorf("Unix(nanotime.Now()) = %d, outside [%d, %d] by over %v", got, before, after, time.Duration(slack))
					return
				}
			}
		}()
	}
	wg.Wait()
}

// A clock that starts at 0 (nanotime.Since's) is converted from its first
// reading, not from an offset of 0.
func TestClockFromZero(t *testing.T) {
	const wall = int64(1_700_000_000e9)
	o := Offset{wall: func() int64 { return wall }, mono: func() int64 { return 0 }}
	if got := o.Unix(5); got != wall+5 {
		t.Fatalf("Unix(5) = %d, want %d", got, wall+5)
	}
}
