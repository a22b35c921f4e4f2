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
	Window   bool // a table of windows (10 per second), else of buckets (10 per second, burst 10)
	Refuse   bool // the table's policy: keyed.WithRefuse, else evict
	Capacity int  // slots
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
	d, err := newAttackDrive(c)
	if err != nil {
		return AttackFigures{}, err
	}
	const start = int64(1) << 40
	tick := max(int64(float64(attackPeriod)/(c.Flood*float64(c.Capacity))), 1) // one flood key a tick
	d.schedule(start)
	for now := start; now < start+int64(c.Run); now += tick {
		d.flood(now)
		d.abuse(now)
		d.behave(now)
	}
	f := d.f
	f.AbuserBound = attackBound(c.Window, int64(c.Run))
	if err := checkAttackBound(c.Window, d.abuser); err != nil {
		f.BoundError = err.Error()
	}
	f.Stats = d.tb.Stats()
	return f, nil
}

// attackDrive is one run of Attack.
type attackDrive struct {
	tb        *keyed.Table
	r         *rand.Rand
	f         AttackFigures
	floodN    int64           // what each flood key asks
	abuserN   int64           // what the abuser asks
	abuser    []bound.Use     // the abuser's admissions
	abuserOwn limit.Limiter   // the abuser's own limiter
	own       []limit.Limiter // each well-behaved key's own limiter
	names     []string        // the well-behaved keys
	next      []int64         // when each asks next
	gi        int             // the next to ask: they ask in a fixed cyclic order
}

func newAttackDrive(c AttackConfig) (*attackDrive, error) {
	tb, err := attackTable(c)
	if err != nil {
		return nil, err
	}
	own, err := ownLimiters(c)
	if err != nil {
		return nil, err
	}
	abuserOwn, err := ownLimiters(AttackConfig{Window: c.Window, Good: 1})
	if err != nil {
		return nil, err
	}
	d := &attackDrive{tb: tb, r: rand.New(rand.NewPCG(c.Seed, 31)), floodN: attackBurst, abuserN: attackBurst,
		abuserOwn: abuserOwn[0], own: own, names: make([]string, c.Good), next: make([]int64, c.Good)}
	switch c.Pattern {
	case Keeper:
		d.abuserN = attackBurst - 1
	case Ties:
		d.floodN, d.abuserN = 1, 1
	}
	for i := range d.names {
		d.names[i] = fmt.Sprint("good", i)
	}
	return d, nil
}

// every is how often a well-behaved key asks: its exact rate.
const every = int64(attackPeriod / attackEvents)

// schedule spreads the well-behaved keys' first requests over one period.
func (d *attackDrive) schedule(start int64) {
	for i := range d.next {
		d.next[i] = start + every*int64(i)/int64(len(d.next))
	}
}

// flood makes one fresh key ask at now.
func (d *attackDrive) flood(now int64) {
	var key [16]byte
	for i := range key {
		key[i] = byte(d.r.Uint32())
	}
	d.tb.AllowNAt(string(key[:]), now, d.floodN)
	d.f.FloodKeys++
}

// abuse makes the abuser ask at now, and its own limiter alone.
func (d *attackDrive) abuse(now int64) {
	if res, err := d.tb.AllowNAt("abuser", now, d.abuserN); res.OK && err == nil {
		d.abuser = append(d.abuser, bound.Use{At: now, Cost: d.abuserN})
		d.f.AbuserAdmitted += d.abuserN
	}
	if res, _ := d.abuserOwn.AllowNAt(now, d.abuserN); res.OK {
		d.f.AbuserOwn += d.abuserN
	}
}

// behave makes the well-behaved keys due by now ask, each judged against
// its own limiter.
func (d *attackDrive) behave(now int64) {
	for len(d.next) > 0 && d.next[d.gi] <= now {
		d.next[d.gi] += every
		got := d.tb.AllowAt(d.names[d.gi], now)
		want := d.own[d.gi].AllowAt(now)
		d.f.GoodAsked++
		if want && !got {
			d.f.GoodWrongDenied++
		}
		d.gi = (d.gi + 1) % len(d.next)
	}
}

func attackTable(c AttackConfig) (*keyed.Table, error) {
	opts := []keyed.Option{keyed.WithCapacity(c.Capacity)}
	if c.Refuse {
		opts = append(opts, keyed.WithRefuse())
	}
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

// FreshKeys decides on keys never seen before from goroutines at once, on
// the real clock, through the plain form (at false) or the ...At form with
// a time read just before (at true, as httplimit calls it), of a table of
// capacity slots whose keys each owe one unit for 1ms after their
// decision, for d; it returns the decisions and the denials.
func FreshKeys(goroutines, capacity int, d time.Duration, window, at bool) (decided, denied int64, err error) {
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
				var ok bool
				if at {
					ok = tb.AllowBytesAt(key[:], nanotime.Now())
				} else {
					ok = tb.AllowBytes(key[:])
				}
				if !ok {
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
