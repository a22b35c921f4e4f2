package bench

import (
	"fmt"
	"testing"
	"time"
)

// TestAttack: under every flood pattern, from a tenth of the table to 100
// times it, for buckets and windows and both policies, the abuser is
// admitted no more than its own limiter's exact bound over every interval;
// evicting (the default) no well-behaved key is wrongly denied while the flood fits
// the table. The wrong denials of larger floods are logged: they are the
// price the package doc names.
func TestAttack(t *testing.T) {
	capacity, run, good := 1024, 10*time.Second, 100
	if testing.Short() {
		capacity, run, good = 512, 3*time.Second, 40
	}
	for _, win := range []bool{false, true} {
		for _, refuse := range []bool{false, true} {
			for _, pattern := range AttackPatterns {
				for _, flood := range []float64{0.1, 1, 10, 100} {
					c := AttackConfig{Window: win, Refuse: refuse, Capacity: capacity, Flood: flood, Pattern: pattern, Good: good, Run: run, Seed: 1}
					f, err := Attack(c)
					if err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("window=%v refuse=%t %s %gx", win, refuse, pattern, flood)
					t.Logf("%s: abuser %d (alone %d) of %d; well-behaved %d wrongly denied of %d (%.3g); %d flood keys; %+v",
						name, f.AbuserAdmitted, f.AbuserOwn, f.AbuserBound, f.GoodWrongDenied, f.GoodAsked, float64(f.GoodWrongDenied)/float64(f.GoodAsked), f.FloodKeys, f.Stats)
					if f.BoundError != "" || f.AbuserAdmitted > f.AbuserBound {
						t.Errorf("%s: abuser admitted %d, bound %d: %s", name, f.AbuserAdmitted, f.AbuserBound, f.BoundError)
					}
					if f.AbuserOwn < f.AbuserBound/3 {
						t.Errorf("%s: the abuser's own limiter admitted only %d of %d: the drive did not press", name, f.AbuserOwn, f.AbuserBound)
					}
					if !refuse && flood < 1 && f.GoodWrongDenied != 0 {
						t.Errorf("%s: %d well-behaved requests wrongly denied while the flood fits", name, f.GoodWrongDenied)
					}
				}
			}
		}
	}
}

// TestAttackFreshKeys: keys never seen before, from 4 goroutines through
// the plain forms on the real clock, are never denied while the keys that
// owed something in the last 10ms fit the table. Each fresh key owes for
// 1ms, so about 11ms of decisions hold a slot that is not idle; the table
// is sized so they fill at most half of it, where a key's candidate slots
// are all busy rarely enough that no owing key loses its slot (at 2^16
// slots, 3.6M decisions/s filled 60% and denied 1-21 fresh keys in 360k).
func TestAttackFreshKeys(t *testing.T) {
	const slots = 1 << 18
	d := 300 * time.Millisecond
	if testing.Short() {
		d = 100 * time.Millisecond
	}
	for _, win := range []bool{false, true} {
		decided, denied, err := FreshKeys(4, slots, d, win, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("window=%v: %d fresh keys, %d denied", win, decided, denied)
		if busy := decided * int64(11*time.Millisecond) / int64(d); busy > slots/2 {
			t.Fatalf("%d keys held a busy slot at once, over half of %d: the test no longer sizes its table for this machine", busy, slots)
		}
		if denied != 0 {
			t.Errorf("window=%v: %d of %d fresh keys denied", win, denied, decided)
		}
		// The ...At forms with a time read just before: denied only if a
		// goroutine stalls 10ms between reading the time and deciding,
		// which a loaded machine can do, so this is logged, not asserted.
		decided, denied, _ = FreshKeys(4, slots, d, win, true)
		t.Logf("window=%v, At forms: %d fresh keys, %d denied", win, decided, denied)
	}
}

// TestAttackHeap: a million distinct clients leave the live heap where the
// table put it.
func TestAttackHeap(t *testing.T) {
	clients := 1000000
	if testing.Short() {
		clients = 100000
	}
	const capacity = 1 << 16
	before, after, err := AttackHeap(clients, capacity)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d clients, %d slots: live heap %d -> %d bytes", clients, capacity, before, after)
	if after > before+capacity*24+1<<20 {
		t.Errorf("live heap grew %d bytes for a table of %d", after-before, capacity*24)
	}
}
