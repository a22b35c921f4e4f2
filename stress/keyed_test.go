package stress

import (
	"testing"
	"time"

	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/packed64"
)

// keyedSubject is one key of a keyed table: with churn, of a table of 8
// slots shared with a hundred times as many keys under the Refuse policy,
// which keeps the key's bound exact (packed64's, as the subjects above);
// without, with its pure step as the model for linearizability.
func keyedSubject(name string, events int64, period time.Duration, burst int64, churn int) Subject {
	mk := func() *keyed.Table {
		return must(keyed.New(events, period, burst, keyed.WithCapacity(8), keyed.WithPolicy(keyed.Refuse)))
	}
	s := packedBucketSubject(name, events, period, burst)
	s.New = func() limit.Limiter { return &KeyedKey{T: mk(), Key: "k", Churn: churn} }
	if churn == 0 {
		p := must(packed64.NewBucketParams(events, period, burst))
		s.Init = packed64.BucketState{}
		s.Step = func(st any, now, n int64) (any, limit.Result, error) {
			return p.Step(st.(packed64.BucketState), now, n)
		}
	}
	return s
}

func keyedWindowSubject(name string, lim int64, w time.Duration, churn int) Subject {
	s := packedWindowSubject(name, lim, w)
	s.New = func() limit.Limiter {
		return &KeyedKey{T: must(keyed.NewWindow(lim, w, keyed.WithCapacity(8), keyed.WithPolicy(keyed.Refuse))), Key: "k", Churn: churn}
	}
	return s
}

func init() {
	subjects = append(subjects,
		keyedSubject("keyed-bucket-1000-per-1ms-burst-3", 1000, time.Millisecond, 3, 0),
		keyedSubject("keyed-bucket-1000-per-1s-burst-50-churn", 1000, time.Second, 50, 800),
		keyedWindowSubject("keyed-window-50-per-1s-churn", 50, time.Second, 800),
	)
}

// TestKeyedBound: many goroutines on keys a hundred times the capacity,
// stale times; every key within its bound (Refuse), or within it plus the
// table's total forgiveness (EvictLeastLoss), on every atomic128 path.
func TestKeyedBound(t *testing.T) {
	const events, period, burst = 10, time.Millisecond, 4
	for _, path := range Paths() {
		for _, policy := range []keyed.Policy{keyed.Refuse, keyed.EvictLeastLoss} {
			restore := path.Use()
			tb := must(keyed.New(events, period, burst, keyed.WithCapacity(16), keyed.WithPolicy(policy)))
			unit := uint64(1) << 8 // packed64's unit for this rate is at most 2^8 ns
			err := KeyedBound(tb, 1600, crowd(), runFor(t), 3000, int64(2*time.Millisecond), seed(t), func(u []bound.Use, extra uint64) error {
				if policy == keyed.Refuse {
					extra = 0
				}
				return bound.CheckSlack(u, burst+extra, 2*unit, events, uint64(period))
			})
			restore()
			if err != nil {
				t.Fatalf("%s, policy %d: %v", path.Name, policy, err)
			}
			s := tb.Stats()
			t.Logf("%s, policy %d: %+v", path.Name, policy, s)
		}
	}
}

// TestKeyedAttack: a million random keys at full speed against a table of
// 65,536 slots while 1,000 well-behaved keys each ask at 1.25 or 0.8 times
// their rate; reports how often the table decided a well-behaved key's
// request otherwise than its own limiter would have, and checks memory did
// not grow.
func TestKeyedAttack(t *testing.T) {
	const events, period, burst = 10, time.Second, 10
	for _, ask := range []struct {
		name  string
		every time.Duration
	}{{"1.25x", period / events * 4 / 5}, {"0.8x", period / events * 5 / 4}} {
		t.Run(ask.name, func(t *testing.T) {
			d := runFor(t)
			tb := must(keyed.New(events, period, burst, keyed.WithCapacity(65536)))
			own := make([]limit.Limiter, 1000)
			for i := range own {
				own[i] = must(packed64.NewBucket(events, period, burst))
			}
			rep := Attack(tb, own, 1000000, 2, ask.every, d)
			t.Logf("%v: %d attacker decisions, %d well-behaved: %d wrongly denied (%.3g), %d wrongly admitted (%.3g); heap %+d bytes; %+v",
				d, rep.Attack, rep.Good, rep.WrongDenied, frac(rep.WrongDenied, rep.Good), rep.WrongAdmitted, frac(rep.WrongAdmitted, rep.Good), rep.HeapGrowth, rep.Stats)
			if rep.Good == 0 || rep.Attack == 0 {
				t.Fatal("nothing ran")
			}
			if rep.HeapGrowth > 1<<20 {
				t.Errorf("the live heap grew by %d bytes", rep.HeapGrowth)
			}
		})
	}
}

func frac(a, b int64) float64 { return float64(a) / float64(max(b, 1)) }
