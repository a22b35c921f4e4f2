package redis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/limit"
)

// Client is what a Limiter runs its scripts on: a *goredis.Client, a
// *goredis.ClusterClient (each decision goes to the node serving its key's
// slot; MOVED and ASK are followed by the client) or a *goredis.Ring.
type Client = goredis.Scripter

type algorithm uint8

const (
	algGCRA algorithm = iota
	algWindow
)

// Limiter is a rate limit kept in Redis, one state per key: a GCRA (the
// token bucket family) or a sliding-window counter. Every decision is one
// round trip running one script on the server holding the key. It is safe
// for concurrent use by many goroutines and many processes.
//
// A Limiter not made by NewGCRA or NewWindow (the zero Limiter, or a nil
// pointer) denies every request with an error that is ErrClosed for
// errors.Is. A Limiter must not be copied after first use (go vet reports
// copies).
type Limiter struct {
	c       Client
	prog    atomic.Pointer[program]
	eval    atomic.Bool // a server answered that it has no FCALL: scripts
	batch   *batcher    // for a single server
	batches sync.Map    // per node of a cluster or ring: *goredis.Client -> *batcher
	prefix  string
	alg     algorithm
	max     int64 // a GCRA's burst, the largest n
	lim     atomic.Pointer[limitArg]
	w       int64 // a window's length, ns
	cfg     config
}

type config struct {
	grace   time.Duration
	timeout time.Duration
	// TwoTier only
	batch    int64
	lease    time.Duration
	share    float64
	retry    time.Duration
	tierOnly bool // set by an option only NewTwoTier takes
}

// Option configures a Limiter (NewGCRA, NewWindow) or a TwoTier
// (NewTwoTier). WithGrace and WithTimeout configure either; WithBatch,
// WithLease, WithFailOpen and WithRetry configure a TwoTier only, and
// NewGCRA and NewWindow refuse them with a *limit.ParamError.
type Option func(*config)

// WithGrace keeps each key in Redis for d after its state has become the
// same as no key (a full bucket, an empty window). The default, 0, lets it
// go at once: Redis expires a key only once its own clock has passed that
// instant, and decisions take their time from that clock, so no decision
// can miss a key whose state still counts. A grace covers decisions made
// with an older time: a server whose clock was stepped back by up to d,
// or a replica promoted with a clock up to d behind. NewGCRA, NewWindow
// and NewTwoTier take it.
func WithGrace(d time.Duration) Option { return func(c *config) { c.grace = d } }

// WithTimeout bounds every call to Redis by d (when the caller's context
// has no earlier deadline). go-redis honours a context's deadline only on
// a client made with ContextTimeoutEnabled: true; on any client, its
// ReadTimeout and WriteTimeout (default 3s) bound each call too. Default:
// none for a Limiter (the client's timeouts; a context costs 4
// allocations a call), 100ms for a TwoTier's borrowing. NewGCRA,
// NewWindow and NewTwoTier take it.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// newConfig applies opts, refusing a nil one and, unless tier (for
// NewTwoTier), one only NewTwoTier takes.
func newConfig(opts []Option, tier bool) (config, error) {
	var c config
	for i, o := range opts {
		if o == nil {
			return c, paramError("option", i, nil, nil, "a nil Option")
		}
		o(&c)
		if c.tierOnly && !tier {
			return c, paramError("option", i, nil, nil, "a TwoTier's option, for NewTwoTier")
		}
	}
	switch {
	case c.grace < 0 || c.grace > 365*24*time.Hour:
		return c, paramError("grace", c.grace, time.Duration(0), 365*24*time.Hour, "")
	case c.timeout < 0:
		return c, paramError("timeout", c.timeout, time.Duration(0), nil, "")
	}
	return c, nil
}

// NewGCRA returns a GCRA limiter whose keys live in Redis under prefix:
// each key admits events per period on average and at most burst at once,
// with package gcra's integer rules and its exact bound (at most
// burst + events*t/period in any interval of length t of the times the
// decisions are made at). Those times are the Redis server's clock (TIME),
// so the machines calling need no synchronised clocks.
//
// It returns a *limit.ParamError for a nil client, a prefix with braces,
// events, period or burst below 1, a rate above one event per ns, an
// interval period/events that is not a whole number of ns and whose
// reduced ratio needs more than 48 bits, a burst whose span (burst times
// the interval) passes 2^48 steps of about 1ns (3.2 days), or an option
// that is nil, out of range or NewTwoTier's only.
func NewGCRA(client Client, prefix string, events int64, period time.Duration, burst int64, opts ...Option) (*Limiter, error) {
	if err := checkClient(client); err != nil {
		return nil, err
	}
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	gp, err := newGCRAParams(events, period, burst)
	if err != nil {
		return nil, err
	}
	cfg, err := newConfig(opts, false)
	if err != nil {
		return nil, err
	}
	l := &Limiter{c: client, batch: new(batcher), prefix: prefix, alg: algGCRA, max: burst, cfg: cfg}
	l.prog.Store(gcraProgram(gp, graceMs(cfg.grace)))
	return l, nil
}

// NewWindow returns a sliding-window limiter whose keys live in Redis
// under prefix, with package window's integer rules: at most limit units
// in any sliding window of length window, as that package estimates it
// from two fixed windows, with its bounds. limit must be in [1, 2^32-1]
// and window in [1ns, 2^50-1 ns] (about 13 days). Other values, a nil
// client, a prefix with braces, or an option that is nil, out of range or
// NewTwoTier's only return a *limit.ParamError.
func NewWindow(client Client, prefix string, limit int64, window time.Duration, opts ...Option) (*Limiter, error) {
	if err := checkClient(client); err != nil {
		return nil, err
	}
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	switch {
	case limit < 1 || limit > 1<<32-1:
		return nil, paramError("limit", limit, int64(1), int64(1<<32-1), "")
	case window < 1 || window > maxWindow:
		return nil, paramError("window", window, time.Duration(1), time.Duration(maxWindow), "")
	}
	cfg, err := newConfig(opts, false)
	if err != nil {
		return nil, err
	}
	l := &Limiter{c: client, batch: new(batcher), prefix: prefix, alg: algWindow, w: int64(window), cfg: cfg}
	l.prog.Store(windowProgram(int64(window), graceMs(cfg.grace)))
	l.lim.Store(&limitArg{n: limit, arg: limit})
	return l, nil
}

func graceMs(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// keyOf returns the Redis key that holds key's state: the prefix and key in
// braces, a hash tag, so that in a Redis Cluster everything kept for one
// key lives in one slot.
func (l *Limiter) keyOf(key string) string {
	if l == nil {
		return "{" + key + "}"
	}
	return l.prefix + "{" + key + "}"
}

// Allow reports whether one unit may be taken now for key, and takes it
// if so.
func (l *Limiter) Allow(ctx context.Context, key string) (bool, error) {
	r, err := l.AllowN(ctx, key, 1)
	return r.OK, err
}

// AllowN takes n units for key at the server's time if all n are
// available. It returns limit.ErrNegativeCost or limit.ErrCostExceedsBurst
// without a round trip for an n that could never be admitted; n == 0 is
// admitted and changes nothing. Remaining is what is left after the
// decision; RetryAfter is how long after the decision's time the same
// request could first be admitted if nothing else were.
//
// On an error from Redis (down, slow past the timeout, a failover under
// way) it returns a Result that is not OK and the error: the limiter fails
// closed. (The two-tier limiter can fail open; see TwoTier.)
func (l *Limiter) AllowN(ctx context.Context, key string, n int64) (limit.Result, error) {
	r, _, err := l.run(ctx, key, false, 0, n, false)
	return r, err
}

// allowNAt is AllowN at the caller's time now, in Unix nanoseconds, in
// [-2^62, 2^62): the tests' hook, to compare decisions at chosen times
// with the Go steps'. A key it writes expires as AllowN's would, counted
// from the server's clock (see WithGrace for times behind it).
func (l *Limiter) allowNAt(ctx context.Context, key string, now, n int64) (result, error) {
	r, _, err := l.run(ctx, key, true, now, n, false)
	return r, err
}

// Reset removes key's state: the key becomes full (GCRA) or empty (window).
func (l *Limiter) Reset(ctx context.Context, key string) error {
	if l == nil || l.c == nil {
		return errZeroValue
	}
	ctx, cancel := l.ctx(ctx)
	defer cancel()
	c, ok := l.c.(goredis.Cmdable)
	if !ok {
		return errors.New("redis: Reset needs a client that can run DEL")
	}
	return c.Del(ctx, l.keyOf(key)).Err()
}

// errTime reports a caller's time outside [-2^62, 2^62).
var errTime = errors.New("redis: now must be in [-2^62, 2^62) Unix ns")

// run is every decision: n units (take: up to n) at the server's time,
// or at now (caller). It returns the Result and the units taken.
func (l *Limiter) run(ctx context.Context, key string, caller bool, now, n int64, take bool) (result, int64, error) {
	r, m, _, err := l.decide(ctx, key, nil, caller, now, n, take, false, 0, 0, "")
	return r, m, err
}

// decide is run for a TwoTier's borrows (tier, GCRA only): it may also give
// back give units of the caller's last borrow, whose written value was
// last, reserves at most reserve units when none is there, and returns the
// value it writes ("" if none). prog is the parameter set to decide under
// (nil: the limiter's in force).
func (l *Limiter) decide(ctx context.Context, key string, prog *program, caller bool, now, n int64, take, tier bool, give, reserve int64, last string) (result, int64, string, error) {
	lim, r0, err := l.check(caller, now, n, take)
	if err != nil {
		return r0, 0, "", err
	}
	// The command is built in a pooled buffer: go-redis holds it only for
	// the call.
	b := argPool.Get().(*argBuf)
	defer argPool.Put(b)
	giving := tier && l.alg == algGCRA
	b.args = decisionArgs(b.args[:0], caller, now, n, take, giving)
	if lim != nil {
		b.args = append(b.args, lim.arg)
	}
	if giving {
		b.args = append(b.args, give, last, reserve)
	}
	b.keys[0] = l.keyOf(key)
	b.prog = prog
	if prog == nil {
		b.prog = l.prog.Load()
	}
	ctx, cancel := l.ctx(ctx)
	defer cancel()
	cmd := l.send(ctx, b)
	var v []int64
	var written string
	err = cmd.Err()
	if err == nil {
		if giving {
			v, written, err = parseGiving(cmd)
		} else {
			v, err = ints(cmd, b.ints[:0])
		}
	}
	clear(b.args)
	if err != nil {
		l.failed(ctx, err)
		return result{}, 0, "", err
	}
	if len(v) != 5 {
		return result{}, 0, "", fmt.Errorf("redis: the script returned %d values, want 5", len(v))
	}
	r := result{OK: v[0] == 1, Remaining: v[2]}
	if !r.OK || take {
		r.RetryAfter = retryAfter(v[3], v[4])
	}
	return r, v[1], written, nil
}

// decisionArgs appends a decision's first arguments to args: mode (1: the
// caller's time), the caller's now in Unix seconds and ns, n, take; or, at
// the server's time taking n or nothing and giving nothing back, n alone
// (the scripts' short form: the server parses every argument of every
// call, about 0.1µs each).
func decisionArgs(args []any, caller bool, now, n int64, take, giving bool) []any {
	if !caller && !take && !giving {
		return append(args, n)
	}
	args = append(args, 0, 0, 0, n, 0)
	if caller {
		s := now / 1e9
		ns := now - s*1e9
		if ns < 0 {
			s, ns = s-1, ns+1e9
		}
		args[0], args[1], args[2] = 1, s, ns
	}
	if take {
		args[4] = 1
	}
	return args
}

// failed asks go-redis to reload a cluster's slot map after an error that
// is not Redis's answer: a node down or unreachable, whose slots may have
// a new master (go-redis reloads it only every minute by itself).
func (l *Limiter) failed(ctx context.Context, err error) {
	var re goredis.Error
	if cc, ok := l.c.(*goredis.ClusterClient); ok && !errors.As(err, &re) {
		cc.ReloadState(ctx)
	}
}

// check refuses a decision that needs no round trip, and returns a
// window's limit in force.
func (l *Limiter) check(caller bool, now, n int64, take bool) (*limitArg, result, error) {
	if l == nil || l.c == nil {
		return nil, zeroResult, errZeroValue
	}
	max, lim := l.limit()
	switch {
	case n < 0:
		return nil, result{RetryAfter: never}, errNegativeCost
	case n > max && !take:
		return nil, result{RetryAfter: never}, errCostExceedsBurst
	case caller && (now < -1<<62 || now >= 1<<62):
		return nil, result{RetryAfter: never}, errTime
	}
	return lim, result{}, nil
}

// limit returns the largest n (a GCRA's burst, a window's limit in force)
// and, for a window, its limit as the script's argument.
func (l *Limiter) limit() (int64, *limitArg) {
	if l.alg != algWindow {
		return l.max, nil
	}
	lim := l.lim.Load()
	return lim.n, lim
}

// ints reads the script's integers into v (the buffer of a decision: no
// allocation, unlike Cmd.Int64Slice).
func ints(cmd *goredis.Cmd, v []int64) ([]int64, error) {
	vals, err := cmd.Slice()
	if err != nil {
		return nil, err
	}
	for _, x := range vals {
		n, ok := x.(int64)
		if !ok {
			return nil, fmt.Errorf("redis: the script returned %T, want an integer", x)
		}
		v = append(v, n)
	}
	return v, nil
}

// parseGiving reads the five integers and the value written.
func parseGiving(cmd *goredis.Cmd) ([]int64, string, error) {
	vals, err := cmd.Slice()
	if err != nil {
		return nil, "", err
	}
	var written string
	if len(vals) == 6 {
		written, _ = vals[5].(string)
		vals = vals[:5]
	}
	v := make([]int64, len(vals))
	for i, x := range vals {
		n, ok := x.(int64)
		if !ok {
			return nil, "", fmt.Errorf("redis: the script returned %T, want an integer", x)
		}
		v[i] = n
	}
	return v, written, nil
}

func retryAfter(s, ns int64) time.Duration {
	const most = int64(never)
	q := ns / 1e9 // ns into [0, 1e9), exactly
	s, ns = s+q, ns-q*1e9
	if ns < 0 {
		s, ns = s-1, ns+1e9
	}
	if s > most/1e9 || (s == most/1e9 && ns > most%1e9) {
		return never
	}
	return time.Duration(s*1e9 + ns)
}

func nop() {}

// argBuf is one decision's command: its key and arguments, the reply, and
// the channel on which the batch that sent it says it is done.
type argBuf struct {
	args []any
	full []any // the command: see command
	prog *program
	ints [6]int64
	keys [1]string
	cmd  *goredis.Cmd
	done chan bool // true: lead the next batch
	run  []*argBuf // the batch this call leads, if it leads one
	ctx  context.Context
}

var argPool = sync.Pool{New: func() any {
	return &argBuf{args: make([]any, 0, 14), full: make([]any, 0, 18), done: make(chan bool, 1)}
}}

func (l *Limiter) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	if l.cfg.timeout == 0 {
		return ctx, nop
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= l.cfg.timeout {
		return ctx, nop
	}
	return context.WithTimeout(ctx, l.cfg.timeout)
}
