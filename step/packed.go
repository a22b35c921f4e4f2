package step

import (
	"time"

	"github.com/cellrate/cellrate/internal/packed64core"
	"github.com/cellrate/cellrate/limit"
)

// The largest parameters a packed word holds (package packed64's limits).
const (
	MaxPackedBurst       = 1<<15 - 1              // a PackedBucket's burst
	MaxPackedWindowLimit = 1<<18 - 1              // a PackedWindow's limit
	MaxPackedWindow      = time.Duration(1) << 62 // a PackedWindow's window
)

// PackedBucket is the rate and burst of package packed64's token bucket,
// for its steps on a 64-bit word.
type PackedBucket struct{ p packed64core.BucketParams }

// PackedBucketState is what a PackedBucket's steps read and return: the
// 64-bit word and a reference time for reading the word's wrapped time, at
// or after the time of the step that wrote the word. A word never written
// (0) may take any Ref, so the zero PackedBucketState is a full bucket.
// Keep the whole state, 16 bytes, and the steps keep Ref right; or keep
// only the Word and one HighWater for many words (see HighWater).
type PackedBucketState struct {
	Word uint64
	Ref  int64
}

// NewPackedBucket returns the PackedBucket refilled with events tokens per
// period and holding up to burst, with packed64.NewBucket's limits and
// errors.
func NewPackedBucket(events int64, period time.Duration, burst int64) (PackedBucket, error) {
	p, err := packed64core.NewBucketParams(events, period, burst)
	return PackedBucket{p}, restamp(err)
}

// Step decides a request of n tokens at now on state s: the state to store
// and the Result. n < 0 returns limit.ErrNegativeCost and n > burst
// limit.ErrCostExceedsBurst, each with a Result that is not OK and
// RetryAfter limit.Never; n == 0 is admitted and changes nothing.
func (b PackedBucket) Step(s PackedBucketState, now, n int64) (PackedBucketState, limit.Result, error) {
	next, r, err := b.p.Step(packed64core.BucketState{Word: packed64core.BucketWord(s.Word), Ref: s.Ref}, now, n)
	return PackedBucketState{uint64(next.Word), next.Ref}, r, err
}

// Unit returns the time unit the word counts in: a power of two ns, at most
// 1/256 of a token's refill time.
func (b PackedBucket) Unit() time.Duration { return b.p.Unit() }

// Slack returns how far a HighWater's reference leads its mark (see
// HighWater).
func (b PackedBucket) Slack() time.Duration { return time.Duration(b.p.Slack()) }

// PackedWindow is the limit and window of package packed64's
// sliding-window counter, for its steps on a 64-bit word.
type PackedWindow struct{ p packed64core.WindowParams }

// PackedWindowState is PackedBucketState for a PackedWindow: the zero
// PackedWindowState is an empty counter.
type PackedWindowState struct {
	Word uint64
	Ref  int64
}

// NewPackedWindow returns the PackedWindow admitting limit units per
// window, with packed64.NewWindow's limits and errors.
func NewPackedWindow(limit int64, window time.Duration) (PackedWindow, error) {
	p, err := packed64core.NewWindowParams(limit, window)
	return PackedWindow{p}, restamp(err)
}

// Step decides a request of n units at now on state s, as
// PackedBucket.Step does (n > limit is limit.ErrCostExceedsBurst).
func (w PackedWindow) Step(s PackedWindowState, now, n int64) (PackedWindowState, limit.Result, error) {
	next, r, err := w.p.Step(packed64core.WindowState{Word: packed64core.WindowWord(s.Word), Ref: s.Ref}, now, n)
	return PackedWindowState{uint64(next.Word), next.Ref}, r, err
}

// Unit returns the time unit the word counts in: a power of two ns.
func (w PackedWindow) Unit() time.Duration { return w.p.Unit() }

// Window returns the window, rounded up to a whole number of units.
func (w PackedWindow) Window() time.Duration { return w.p.Window() }

// Slack returns how far a HighWater's reference leads its mark (see
// HighWater).
func (w PackedWindow) Slack() time.Duration { return time.Duration(w.p.Slack()) }

// HighWater is one reference time for many packed words kept without their
// own: load a word, then take Ref(slack) as its state's Ref; after a step
// admits at now, Raise(now, slack) before storing the next word. The mark
// only rises. A now far ahead of the clock the others read raises it too,
// and words written before it may then refill (or forget) nothing until the
// clock comes within one wrap of that now; they never admit more. Feed all
// words sharing a HighWater from one clock. The zero HighWater holds the
// start of time, so it suits any clock. It is safe for concurrent use and
// must not be copied after first use.
type HighWater struct {
	_ noCopy
	h packed64core.HighWater
}

// noCopy makes go vet's copylocks check report copies under the user's
// type, not the internal one it wraps.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// Ref returns the reference time to read words with: the mark plus slack,
// saturating at math.MaxInt64.
func (h *HighWater) Ref(slack time.Duration) int64 { return h.h.Ref(int64(slack)) }

// Raise raises the mark to cover now, for words written at now.
func (h *HighWater) Raise(now int64, slack time.Duration) { h.h.Raise(now, int64(slack)) }
