package stress

import (
	"time"

	"github.com/cellrate/cellrate/bucket"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/striped"
)

// bucketAllSubject: an All of a bucket and a striped limiter (in the order
// given) admits only what both admit, and refunds the first when the second
// denies. Checked against the first member's bound, the one refunded: a
// refund that gave back more than the admission took would show there.
func bucketAllSubject(name string, first, second [3]int64, stripedFirst bool) Subject {
	mk := func(p [3]int64, asStriped bool) limit.Member {
		if asStriped {
			return must(striped.New(p[0], time.Duration(p[1]), p[2], striped.WithBatch(max(1, p[2]/4))))
		}
		return must(bucket.New(p[0], time.Duration(p[1]), p[2]))
	}
	return Subject{
		Name: name,
		New: func() limit.Limiter {
			return must(limit.NewAll(mk(first, stripedFirst), mk(second, !stripedFirst)))
		},
		MaxN: min(first[2], second[2]), GivenTimes: true,
		Burst: first[2], Rate: RatePer(first[0], time.Duration(first[1])),
	}
}

// The first member has the smaller burst (so a cost above it is refused
// with limit.ErrCostExceedsBurst, see limit.All.AllowNAt) and binds over
// short intervals (2 + 20t < 6 + 10t for t < 0.4s), where its bound is
// checked; the second, slower, denies often, and the first is refunded
// then.
func init() {
	subjects = append(subjects,
		bucketAllSubject("all-bucket-20-per-1s-burst-2-then-striped-10-per-1s-burst-6",
			[3]int64{20, int64(time.Second), 2}, [3]int64{10, int64(time.Second), 6}, false),
		bucketAllSubject("all-striped-20-per-1s-burst-2-then-bucket-10-per-1s-burst-6",
			[3]int64{20, int64(time.Second), 2}, [3]int64{10, int64(time.Second), 6}, true),
	)
}
