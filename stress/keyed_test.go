package stress

import (
	"testing"
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/internal/bound"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
)

// keyedSubject is one key of a keyed table: with churn, of a table of 8
// slots shared with a hundred times as many keys under the given policy,
// each keeping the key's bound exact (gcra's, as the subjects above);
// without, with gcra's pure step as the model for linearizability.
func keyedSubject(name string, events int64, period time.Duration, burst int64, churn int, refuse bool) Subject {
	mk := func() *keyed.Table {
		return must(keyed.New(events, period, burst, keyedOpts(8, refuse)...))
	}
	s := gcraSubject(name, events, period, burst)
	s.New = func() limit.Limiter { return &KeyedKey{T: mk(), Key: "k", Churn: churn} }
	if churn != 0 {
		s.Init, s.Step = nil, nil // the sketch may delay the key: its bound holds, not its own step
	}
	return s
}

func keyedWindowSubject(name string, lim int64, w time.Duration, churn int, refuse bool) Subject {
	s := packedWindowSubject(name, lim, w)
	s.New = func() limit.Limiter {
		return &KeyedKey{T: must(keyed.NewWindow(lim, w, keyedOpts(8, refuse)...)), Key: "k", Churn: churn}
	}
	if !refuse {
		s.Init, s.Step = nil, nil // the sketch may delay the key: its bound holds, not its own step
	}
	return s
}

func init() {
	subjects = append(subjects,
		keyedSubject("keyed-bucket-1000-per-1ms-burst-3", 1000, time.Millisecond, 3, 0, false),
		keyedSubject("keyed-bucket-1000-per-1s-burst-50-churn", 1000, time.Second, 50, 800, false),
		keyedSubject("keyed-bucket-1000-per-1s-burst-50-churn-refuse", 1000, time.Second, 50, 800, true),
		keyedWindowSubject("keyed-window-50-per-1s-churn", 50, time.Second, 800, false),
		keyedWindowSubject("keyed-window-50-per-1s-churn-refuse", 50, time.Second, 800, true),
	)
}

// TestKeyedBound: many goroutines on keys a hundred times the capacity,
// stale times; every key within its own exact bound under either policy,
// on every atomic128 path.
func TestKeyedBound(t *testing.T) {
	const events, period, burst = 10, time.Millisecond, 4
	for _, path := range Paths() {
		for _, refuse := range []bool{true, false} {
			restore := path.Use()
			tb := must(keyed.New(events, period, burst, keyedOpts(16, refuse)...))
			err := KeyedBound(tb, 16, burst, 1600, crowd(), runFor(t), 3000, int64(2*time.Millisecond), seed(t), func(u []bound.Use) error {
				return bound.Check(u, burst, events, uint64(period))
			})
			restore()
			if err != nil {
				t.Fatalf("%s, refuse %t: %v", path.Name, refuse, err)
			}
			s := tb.Stats()
			t.Logf("%s, refuse %t: %+v", path.Name, refuse, s)
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
				own[i] = must(gcra.New(events, period, burst))
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

// keyedOpts are a table's options: slots, and WithRefuse if refuse.
func keyedOpts(slots int, refuse bool) []keyed.Option {
	opts := []keyed.Option{keyed.WithCapacity(slots)}
	if refuse {
		opts = append(opts, keyed.WithRefuse())
	}
	return opts
}
