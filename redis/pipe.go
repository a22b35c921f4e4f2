package redis

import (
	"context"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"
)

// batcher sends the decisions a process makes at once together: while one
// batch is on its way to Redis, the decisions that arrive queue; when it is
// back, the first of them sends the queue as the next batch, in one go-redis
// pipeline (one write, one read, per node). No decision waits for company:
// a decision alone is sent at once, and one that queues waits for at most
// the batch in flight and its own.
type batcher struct {
	mu    sync.Mutex
	busy  bool      // a batch is in flight
	queue []*argBuf // waiting for the next batch
	run   []*argBuf // the batch in flight (its leader's only)
}

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

// send runs b's script call, alone or in a batch, and returns its reply.
func (l *Limiter) send(ctx context.Context, b *argBuf) *goredis.Cmd {
	q := l.batcherFor(ctx, b.keys[0])
	q.mu.Lock()
	if q.busy {
		q.queue = append(q.queue, b)
		q.mu.Unlock()
		if !<-b.done {
			return b.cmd
		}
		q.mu.Lock() // leading: b is in the queue
	}
	q.busy = true
	q.run = append(q.run[:0], q.queue...)
	q.queue = q.queue[:0]
	q.mu.Unlock()
	if len(q.run) == 0 {
		q.run = append(q.run, b)
	}
	l.flush(ctx, q.run)
	for _, c := range q.run {
		if c != b {
			c.done <- false
		}
	}
	clear(q.run)
	q.mu.Lock()
	if len(q.queue) > 0 {
		q.queue[0].done <- true
	} else {
		q.busy = false
	}
	q.mu.Unlock()
	return b.cmd
}

// flush sends the batch: one call as EVALSHA (EVAL after NOSCRIPT), more in
// one pipeline, each NOSCRIPT among them sent again as EVAL. The leader's
// context bounds the batch.
func (l *Limiter) flush(ctx context.Context, batch []*argBuf) {
	p, ok := l.c.(pipeliner)
	if len(batch) == 1 || !ok {
		for _, c := range batch {
			l.runOne(ctx, c)
		}
		return
	}
	pipe := p.Pipeline()
	for _, c := range batch {
		c.cmd = l.script.EvalSha(ctx, pipe, c.keys[:], c.args...)
	}
	pipe.Exec(ctx)
	for _, c := range batch {
		if err := c.cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			c.cmd = l.script.Eval(ctx, l.c, c.keys[:], c.args...)
		}
	}
}

// doer is a client that sends any command: with it, a call's command is
// built in its reused buffer, with the command name and hash boxed once per
// Limiter (3 allocations fewer than Script.Run).
type doer interface {
	Do(ctx context.Context, args ...any) *goredis.Cmd
}

// runOne runs c's call as EVALSHA, then as EVAL after NOSCRIPT.
func (l *Limiter) runOne(ctx context.Context, c *argBuf) {
	d, ok := l.c.(doer)
	if !ok {
		c.cmd = l.script.Run(ctx, l.c, c.keys[:], c.args...)
		return
	}
	c.full = append(c.full[:0], evalsha, l.sha, 1, c.keys[0])
	c.full = append(c.full, c.args...)
	c.cmd = d.Do(ctx, c.full...)
	clear(c.full)
	if err := c.cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		c.cmd = l.script.Eval(ctx, l.c, c.keys[:], c.args...)
	}
}

var evalsha any = "evalsha"
