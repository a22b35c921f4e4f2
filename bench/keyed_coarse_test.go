package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/cellrate/cellrate/bench/paired"
)

// BenchmarkKeyedCoarsePaired: keyed with its coarse clock against
// sethvargo/go-limiter, in 24 paired rounds (package paired, CPU time, one
// goroutine), for a key drawn from 1,000 or 1,000,000 each decided on
// once before. It reports how many times faster keyed is, with the 95%
// interval's ends; b.N does not matter (run it with -benchtime 1x).
func BenchmarkKeyedCoarsePaired(b *testing.B) {
	impls := map[string]KeyedImpl{}
	for _, im := range KeyedImpls() {
		impls[im.Name] = im
	}
	for _, n := range []int{1000, 1000000} {
		b.Run(fmt.Sprint("keys=", n), func(b *testing.B) {
			keys := Keys(n)
			build := func(name string) paired.Case {
				l := impls[name].New(n)
				for _, k := range keys {
					l.Allow(k)
				}
				return KeyedCase(name, l, keys)
			}
			ours, base, err := paired.Measure(build("keyed-coarse"), build("sethvargo"),
				paired.Config{Rounds: 24, Turn: 6 * time.Millisecond, G: 1})
			if err != nil {
				b.Fatal(err)
			}
			e := paired.Ratio(base.NsPerOp(), ours.NsPerOp(), 0.95)
			b.ReportMetric(e.Center, "x")
			b.ReportMetric(e.Lo, "x-lo")
			b.ReportMetric(e.Hi, "x-hi")
		})
	}
}
