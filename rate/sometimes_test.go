package rate_test

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cellrate/cellrate/rate"
)

// calls runs Do n times, sleeping gap between calls, and returns which ran f.
func calls(s *rate.Sometimes, n int, gap time.Duration) []int {
	var ran []int
	for i := range n {
		s.Do(func() { ran = append(ran, i) })
		time.Sleep(gap)
	}
	return ran
}

func TestSometimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, c := range []struct {
			s    *rate.Sometimes
			gap  time.Duration
			want []int
		}{
			{&rate.Sometimes{}, 0, []int{0}},
			{&rate.Sometimes{First: 3}, 0, []int{0, 1, 2}},
			{&rate.Sometimes{Every: 4}, 0, []int{0, 4, 8}},
			{&rate.Sometimes{Interval: time.Second}, 400 * time.Millisecond, []int{0, 3, 6, 9}},
			{&rate.Sometimes{First: 2, Every: 5}, 0, []int{0, 1, 5}},
			{&rate.Sometimes{First: 1, Every: 4, Interval: time.Second}, 300 * time.Millisecond, []int{0, 4, 8}},
			{&rate.Sometimes{First: 1, Every: 100, Interval: time.Second}, 300 * time.Millisecond, []int{0, 4, 8}},
		} {
			if got := calls(c.s, 10, c.gap); !slices.Equal(got, c.want) {
				t.Errorf("First %d Every %d Interval %v, gap %v: ran %v, want %v", c.s.First, c.s.Every, c.s.Interval, c.gap, got, c.want)
			}
		}
	})
}
