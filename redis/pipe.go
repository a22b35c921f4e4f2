package redis

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// batcher sends the decisions a process makes at once together: up to
// lanes batches are on their way to Redis at a time (so the server is kept
// busy while a batch's reply travels), and the decisions that arrive while
// all lanes are busy queue; when a batch is back, the first of the queue
// sends the whole queue as the next batch, in one go-redis pipeline (one
// write, one read, per node). No decision waits for company: a decision
// that finds a free lane is sent at once, and one that queues waits for at
// most one batch in flight and its own.
type batcher struct {
	mu     sync.Mutex
	flying int       // batches in flight, at most lanes
	queue  []*argBuf // waiting for the next batch
}

// lanes is how many batches a batcher keeps in flight at once: two, so
// that one is on the server while the other's reply travels and its
// callers come back. Each more lane lets more decisions find one free and
// go alone: batches shrink and every decision costs more CPU, on the
// client and on the server (measured with 16 goroutines: 0.19 server
// reads a decision with two lanes, 0.34 with four, and 11% less CPU).
const lanes = 2

// pipeliner is a client that can send commands in one pipeline.
type pipeliner interface{ Pipeline() goredis.Pipeliner }

// batcherFor returns the batcher of the node serving key: batches are per
// node, so that a slow or dead node holds up only its own keys.
func (l *Limiter) batcherFor(ctx context.Context, key string) *batcher {
	node := nodeOf(ctx, l.c, key)
	if node == nil {
		return l.batch
	}
	if q, ok := l.batches.Load(node); ok {
		return q.(*batcher)
	}
	q, _ := l.batches.LoadOrStore(node, new(batcher))
	return q.(*batcher)
}

// send runs b's call, alone or in a batch, and returns its reply.
func (l *Limiter) send(ctx context.Context, b *argBuf) *goredis.Cmd {
	q := l.batcherFor(ctx, b.keys[0])
	b.ctx = ctx
	defer func() { b.ctx = nil }()
	q.mu.Lock()
	if q.flying == lanes {
		q.queue = append(q.queue, b)
		q.mu.Unlock()
		if !<-b.done {
			return b.cmd
		}
		// Leading b.run, the queue handed over with a lane.
	} else {
		q.flying++
		q.mu.Unlock()
		b.run = append(b.run[:0], b)
	}
	l.flush(b.run)
	for _, c := range b.run {
		if c != b {
			c.done <- false
		}
	}
	clear(b.run)
	q.handOver()
	return b.cmd
}

// handOver passes a finished batch's lane, with the whole queue as the
// next batch, to the queue's first decision; with none queued the lane is
// free. The queue leaves under the lock, so no decision is handed a lane
// twice.
func (q *batcher) handOver() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		q.flying--
		return
	}
	next := q.queue[0]
	next.run = append(next.run[:0], q.queue...)
	clear(q.queue)
	q.queue = q.queue[:0]
	next.done <- true
}

// flush sends the batch: one call alone, more in one pipeline, each call
// that failed for want of its function or script (a restarted server, a
// node new to the cluster, a server without Functions) sent again alone,
// which loads it or turns to scripts. A call alone runs under its own
// context; a pipeline under batchContext's.
func (l *Limiter) flush(batch []*argBuf) {
	p, ok := l.c.(pipeliner)
	if len(batch) == 1 || !ok || l.eval.Load() {
		for _, c := range batch {
			l.runOne(c.ctx, c)
		}
		return
	}
	ctx, cancel := batchContext(batch)
	defer cancel()
	pipe := p.Pipeline()
	for _, c := range batch {
		c.cmd = pipe.Do(ctx, c.command(fcall, c.prog.name)...)
	}
	pipe.Exec(ctx)
	for _, c := range batch {
		clear(c.full)
		if err := c.cmd.Err(); missing(err) || noFunctions(err) {
			l.runOne(c.ctx, c)
		}
	}
}

// batchContext is what a pipeline runs under: its first decision's
// context's values, none of its decisions' cancellation, and the latest
// of their deadlines (none if one has none): a caller that gives up (a
// client gone) fails no other decision in its batch.
func batchContext(batch []*argBuf) (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(batch[0].ctx)
	var last time.Time
	for _, c := range batch {
		d, ok := c.ctx.Deadline()
		if !ok {
			return ctx, nop
		}
		if d.After(last) {
			last = d
		}
	}
	return context.WithDeadline(ctx, last)
}

// doer is a client that sends any command: with it, a call's command is
// built in its reused buffer, with the command name and the function's
// name boxed once (3 allocations fewer than Script.Run or FCall).
type doer interface {
	Do(ctx context.Context, args ...any) *goredis.Cmd
}

// runOne runs c's call alone: FCALL, loading the library and calling again
// if the node has not got it; as a script on a server without Functions
// or one that refuses to load them (an ACL without FUNCTION, say).
func (l *Limiter) runOne(ctx context.Context, c *argBuf) {
	d, ok := l.c.(doer)
	if !ok {
		c.cmd = c.prog.script.Run(ctx, l.c, c.keys[:], c.args...)
		return
	}
	if !l.eval.Load() && l.callFunction(ctx, d, c) {
		return
	}
	c.cmd = d.Do(ctx, c.command(evalsha, c.prog.sha)...)
	clear(c.full)
	if missing(c.cmd.Err()) {
		c.cmd = c.prog.script.Eval(ctx, l.c, c.keys[:], c.args...)
	}
}

// callFunction runs c's call with FCALL, and reports false, with the
// Limiter turned to scripts for good, if the server has no Functions or
// refuses to load them.
func (l *Limiter) callFunction(ctx context.Context, d doer, c *argBuf) bool {
	defer clear(c.full)
	c.cmd = d.Do(ctx, c.command(fcall, c.prog.name)...)
	err := c.cmd.Err()
	if missing(err) {
		var refused goredis.Error
		if errors.As(l.load(ctx, c.prog), &refused) {
			err = refused
		} else {
			// Call again even if a node could not be reached: the key's
			// may have it now.
			c.cmd = d.Do(ctx, c.full...)
			return true
		}
	}
	if noFunctions(err) {
		l.eval.Store(true)
		return false
	}
	return true
}

// command builds c's call in its reused buffer: cmd, the function's name
// or the script's hash, 1, the key, then the arguments. The key goes as a
// *string (go-redis writes it and hashes it for a cluster's slot as the
// string): a string in an interface would be an allocation.
func (c *argBuf) command(cmd, name any) []any {
	c.full = append(c.full[:0], cmd, name, 1, &c.keys[0])
	c.full = append(c.full, c.args...)
	return c.full
}

var (
	fcall   any = "fcall"
	evalsha any = "evalsha"
)

// missing reports a server that has not got the function or the script.
func missing(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "ERR Function not found") || strings.HasPrefix(msg, "NOSCRIPT")
}

// noFunctions reports a server older than Redis 7 (without FCALL), or one
// that refuses FCALL or FUNCTION LOAD: an unknown command, or a user whose
// ACL does not allow it.
func noFunctions(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	return (strings.HasPrefix(msg, "err unknown command") || strings.HasPrefix(msg, "noperm")) &&
		(strings.Contains(msg, "fcall") || strings.Contains(msg, "function"))
}

// load loads p's library on every master (a cluster) or shard (a ring) or
// on the server: a node that lost it (restarted empty) or never had it (new
// to the cluster, or a slot moved there) may serve any key. Replicas
// receive it from their master.
func (l *Limiter) load(ctx context.Context, p *program) error {
	one := func(ctx context.Context, c *goredis.Client) error {
		return c.FunctionLoadReplace(ctx, p.lib).Err()
	}
	switch c := l.c.(type) {
	case *goredis.ClusterClient:
		return c.ForEachMaster(ctx, one)
	case *goredis.Ring:
		return c.ForEachShard(ctx, one)
	case goredis.Cmdable:
		return c.FunctionLoadReplace(ctx, p.lib).Err()
	}
	return errors.New("redis: cannot load functions through this client")
}
