package bench

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
	"github.com/cellrate/cellrate/packed64"
)

// The attack drive: one abuser, a flood of fresh keys and well-behaved
// keys against one keyed table, on an injected clock, so each figure is
// exact and the same on every machine.

// Attack patterns: what the abuser and each flood key ask.
const (
	// WholeBurst: flood keys take their whole burst; so does the abuser,
	// whenever it may.
	WholeBurst = "whole-burst"
	// Keeper: flood keys take their whole burst; the abuser takes all but
	// one unit, so it owes the least of any key in its groups.
	Keeper = "keeper"
	// Ties: flood keys take one unit, as the abuser does.
	Ties = "ties"
)

// AttackPatterns are the patterns the drive runs.
var AttackPatterns = []string{WholeBurst, Keeper, Ties}

// AttackConfig is one run of the drive.
type AttackConfig struct {
	Window   bool         // a table of windows (10 per second), else of buckets (10 per second, burst 10)
	Policy   keyed.Policy // the table's policy
	Capacity int          // slots
	// Flood is the size of the flood as a multiple of the capacity: so
	// many times Capacity fresh keys arrive each second (a bucket's burst
	// time, a window's length), so about that many owe at once.
	Flood   float64
	Pattern string
	Good    int           // well-behaved keys, each asking one unit every 100ms (their exact rate)
	Run     time.Duration // on the injected clock
	Seed    uint64
}

// AttackFigures is what a run measured.
type AttackFigures struct {
	// AbuserAdmitted is the units the abuser was admitted over the run,
	// AbuserBound the most its own limiter's bound allows over the run's
	// length, and BoundError the first interval over which its admissions
	// exceeded the exact bound (empty if none).
	AbuserAdmitted, AbuserBound int64
	BoundError                  string
	// AbuserOwn is what the abuser's own limiter, alone, admits of the
	// same requests.
	AbuserOwn int64
	// GoodAsked counts the well-behaved keys' requests, GoodWrongDenied
	// those the table denied while the key's own limiter admitted them.
	GoodAsked, GoodWrongDenied int64
	FloodKeys                  int64
	Stats                      keyed.Stats
}

const (
	attackEvents = 10
	attackPeriod = time.Second
	attackBurst  = 10
)

// Attack runs one configuration of the drive and returns its figures.
func Attack(c AttackConfig) (AttackFigures, error) {
	var f AttackFigures
	tb, err := attackTable(c)
	if err != nil {
		return f, err
	}
	own, err := ownLimiters(c)
	if err != nil {
		return f, err
	}
	r := rand.New(rand.NewPCG(c.Seed, 31))
	const start = int64(1) << 40
	tick := int64(float64(attackPeriod) / (c.Flood * float64(c.Capacity))) // one flood key a tick
	tick = max(tick, 1)
	every := int64(attackPeriod / attackEvents)
	floodN, abuserN := int64(attackBurst), int64(attackBurst)
	switch c.Pattern {
	case Keeper:
		abuserN = attackBurst - 1
	case Ties:
		floodN, abuserN = 1, 1
	}
	var abuser []bound.Use
	abuserOwn, err := ownLimiters(AttackConfig{Window: c.Window, Good: 1})
	if err != nil {
		return f, err
	}
	// The well-behaved keys ask in a fixed cyclic order (each every
	// `every`, from an offset of its own), so the next is at gi.
	nextGood := make([]int64, c.Good)
	for i := range nextGood {
		nextGood[i] = start + every*int64(i)/int64(max(c.Good, 1))
	}
	gi := 0
	goodNames := make([]string, c.Good)
	for i := range goodNames {
		goodNames[i] = fmt.Sprint("good", i)
	}
	var key [16]byte
	for now := start; now < start+int64(c.Run); now += tick {
		for i := range key {
			key[i] = byte(r.Uint32())
		}
		tb.AllowNAt(string(key[:]), now, floodN)
		f.FloodKeys++
		if res, err := tb.AllowNAt("abuser", now, abuserN); res.OK && err == nil {
			abuser = append(abuser, bound.Use{At: now, Cost: abuserN})
			f.AbuserAdmitted += abuserN
		}
		if res, _ := abuserOwn[0].AllowNAt(now, abuserN); res.OK {
			f.AbuserOwn += abuserN
		}
		for c.Good > 0 && nextGood[gi] <= now {
			nextGood[gi] += every
			got := tb.AllowAt(goodNames[gi], now)
			want := own[gi].AllowAt(now)
			f.GoodAsked++
			if want && !got {
				f.GoodWrongDenied++
			}
			gi = (gi + 1) % c.Good
		}
	}
	f.AbuserBound = attackBound(c.Window, int64(c.Run))
	if err := checkAttackBound(c.Window, abuser); err != nil {
		f.BoundError = err.Error()
	}
	f.Stats = tb.Stats()
	return f, nil
}

func attackTable(c AttackConfig) (*keyed.Table, error) {
	opts := []keyed.Option{keyed.WithCapacity(c.Capacity), keyed.WithPolicy(c.Policy)}
	if c.Window {
		return keyed.NewWindow(attackEvents, attackPeriod, opts...)
	}
	return keyed.New(attackEvents, attackPeriod, attackBurst, opts...)
}

// ownLimiters returns each well-behaved key's own limiter.
func ownLimiters(c AttackConfig) ([]limit.Limiter, error) {
	own := make([]limit.Limiter, c.Good)
	for i := range own {
		var err error
		if c.Window {
			own[i], err = packed64.NewWindow(attackEvents, attackPeriod)
		} else {
			own[i], err = gcra.New(attackEvents, attackPeriod, attackBurst)
		}
		if err != nil {
			return nil, err
		}
	}
	return own, nil
}

// attackBound is the most the abuser's own limiter admits at times within
// an interval of length d ns: burst + d/T for a bucket; limit*(ceil(d/W)+1)
// for a window.
func attackBound(win bool, d int64) int64 {
	if win {
		w := int64(attackPeriod)
		return attackEvents * ((d+w-1)/w + 1)
	}
	return attackBurst + d*attackEvents/int64(attackPeriod)
}

// checkAttackBound checks the abuser's admissions over every interval
// against its own limiter's exact bound.
func checkAttackBound(win bool, uses []bound.Use) error {
	if win {
		return bound.Check(uses, 2*attackEvents, attackEvents, uint64(attackPeriod))
	}
	return bound.Check(uses, attackBurst, attackEvents, uint64(attackPeriod))
}

// FreshKeys decides on keys never seen before from goroutines at once,
// through the plain form (the real clock) of a table of capacity slots
// whose keys each owe one unit for 1ms after their decision, for d; it
// returns the decisions and the denials.
func FreshKeys(goroutines, capacity int, d time.Duration, window bool) (decided, denied int64, err error) {
	var tb *keyed.Table
	if window {
		tb, err = keyed.NewWindow(1, time.Millisecond, keyed.WithCapacity(capacity))
	} else {
		tb, err = keyed.New(1, time.Millisecond, 1, keyed.WithCapacity(capacity))
	}
	if err != nil {
		return 0, 0, err
	}
	var dec, den atomic.Int64
	var wg sync.WaitGroup
	deadline := nanotime.Now() + int64(d)
	for g := range goroutines {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 77))
			var key [16]byte
			n := int64(0)
			for ; n%256 != 0 || nanotime.Now() < deadline; n++ {
				for i := range key {
					key[i] = byte(r.Uint32())
				}
				if !tb.AllowBytes(key[:]) {
					den.Add(1)
				}
			}
			dec.Add(n)
		})
	}
	wg.Wait()
	return dec.Load(), den.Load(), nil
}

// AttackHeap returns the live heap before and after clients distinct
// clients each decide once on a table of capacity slots: the table's
// memory is made by New and never grows.
func AttackHeap(clients, capacity int) (before, after uint64, err error) {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	before = m.HeapAlloc
	tb, err := keyed.New(attackEvents, attackPeriod, attackBurst, keyed.WithCapacity(capacity))
	if err != nil {
		return 0, 0, err
	}
	var key [8]byte
	for i := range clients {
		for j := range key {
			key[j] = byte(i >> (8 * j))
		}
		tb.AllowBytesAt(key[:], int64(i)*1000)
	}
	runtime.GC()
	runtime.ReadMemStats(&m)
	runtime.KeepAlive(tb)
	return before, m.HeapAlloc, nil
}
