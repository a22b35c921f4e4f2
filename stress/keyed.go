package stress

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// KeyedKey is one key of a keyed table seen as a limiter. With Churn set,
// each decision on the key first makes one on a random key of Churn other
// keys at the same time, so the key competes for its slot; a refusal
// (keyed.ErrFull) is a plain denial.
type KeyedKey struct {
	T     *keyed.Table
	Key   string
	Churn int
	r     atomic.Uint64
}

func (k *KeyedKey) AllowAt(now int64) bool {
	r, _ := k.AllowNAt(now, 1)
	return r.OK
}

func (k *KeyedKey) AllowNAt(now, n int64) (limit.Result, error) {
	if k.Churn > 0 {
		x := k.r.Add(0x9E3779B97F4A7C15)
		k.T.AllowUint64At(x%uint64(k.Churn), now)
	}
	r, err := k.T.AllowNAt(k.Key, now, n)
	if errors.Is(err, keyed.ErrFull) {
		err = nil
	}
	return r, err
}

// KeyedBound runs goroutines deciding on keys drawn from nkeys (a few of
// them hot), at most 2 (and burst) units at a time, with times that move
// forward in steps of step ns and arrive up to stale ns late, for d, and
// runs check on each key's admissions; tb has the given number of slots.
func KeyedBound(tb *keyed.Table, slots int, burst int64, nkeys, goroutines int, d time.Duration, step, stale int64, seed uint64,
	check func(uses []bound.Use) error) error {
	var (
		mu   sync.Mutex
		uses = make([][]bound.Use, nkeys)
		wg   sync.WaitGroup
	)
	deadline := time.Now().Add(d)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(g)))
			mine := make(map[int][]bound.Use)
			base := int64(1 << 40)
			for i := int64(0); i%256 != 0 || time.Now().Before(deadline); i++ {
				k := r.IntN(nkeys)
				if r.IntN(2) == 0 {
					k = r.IntN(min(nkeys, 8))
				}
				now := base + i*step - r.Int64N(stale+1)
				n := 1 + r.Int64N(min(2, burst))
				if res, err := tb.AllowNAt(fmt.Sprint("k", k), now, n); err == nil && res.OK {
					mine[k] = append(mine[k], bound.Use{At: now, Cost: n})
				}
				if i%64 == 0 {
					runtime.Gosched()
				}
			}
			mu.Lock()
			for k, u := range mine {
				uses[k] = append(uses[k], u...)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	s := tb.Stats()
	if s.Keys > int64(slots) {
		return fmt.Errorf("%d keys in %d slots", s.Keys, slots)
	}
	for k, u := range uses {
		if err := check(u); err != nil {
			return fmt.Errorf("key %d: %w", k, err)
		}
	}
	return nil
}

// AttackReport is what an attack drive measured.
type AttackReport struct {
	Good, WrongDenied, WrongAdmitted int64 // the well-behaved keys' decisions
	Attack                           int64 // the attacker's decisions
	Stats                            keyed.Stats
	HeapGrowth                       int64 // live heap after the drive minus before, in bytes
}

// Attack drives tb, from the real clock, with attackers goroutines making
// decisions on random keys among attackKeys at full speed, while one
// goroutine runs len(own) well-behaved keys (0, 1, ...), each asking once
// every `every`, for d. Each good key's decision is compared with its own limiter's
// (own, one per key, fed the same times): WrongDenied counts decisions the
// table denied and the own limiter admitted, WrongAdmitted the reverse.
func Attack(tb *keyed.Table, own []limit.Limiter, attackKeys uint64, attackers int, every time.Duration, d time.Duration) AttackReport {
	var rep AttackReport
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var stop atomic.Bool
	var wg, started sync.WaitGroup
	var attack atomic.Int64
	for g := range attackers {
		wg.Add(1)
		started.Add(1)
		go func() {
			defer wg.Done()
			started.Done()
			r := rand.New(rand.NewPCG(uint64(g), 99))
			n := int64(0)
			for ; !stop.Load(); n++ {
				for range 64 {
					tb.AllowUint64At(1<<32+r.Uint64N(attackKeys), nanotime.Now())
				}
			}
			attack.Add(64 * n)
		}()
	}
	started.Wait() // a loaded machine may start the attackers late
	// The good keys: key i asks every `every`, from an offset of its own.
	start := nanotime.Now()
	next := make([]int64, len(own))
	for i := range next {
		next[i] = start + int64(i)*int64(every)/int64(len(own))
	}
	for deadline := start + int64(d); ; {
		now := nanotime.Now()
		if now > deadline {
			break
		}
		for i, o := range own {
			if next[i] > now {
				continue
			}
			next[i] += int64(every)
			at := nanotime.Now() // the time of this request, as Allow reads it
			got := tb.AllowUint64At(uint64(i), at)
			want := o.AllowAt(at)
			rep.Good++
			switch {
			case got && !want:
				rep.WrongAdmitted++
			case !got && want:
				rep.WrongDenied++
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	runtime.GC()
	runtime.ReadMemStats(&after)
	rep.Attack = attack.Load()
	rep.Stats = tb.Stats()
	rep.HeapGrowth = int64(after.HeapAlloc) - int64(before.HeapAlloc)
	return rep
}
