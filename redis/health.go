package redis

import (
	"context"
	"sync"
	"sync/atomic"

	goredis "github.com/redis/go-redis/v9"
)

// health is what a TwoTier knows of one Redis node: the round trips to it
// that failed in a row, and until when (monotonic ns) it is not asked.
type health struct {
	failing   atomic.Int64
	downUntil atomic.Int64
}

// nodes keeps a health per node, so that a node's failure is felt only by
// the keys it serves: per master of a ClusterClient (a promoted replica
// starts afresh), per shard of a Ring, one for a single server or a client
// of another kind.
type nodes struct {
	all sync.Map // *goredis.Client -> *health
	def health
}

// of returns the health of the node serving key (a Redis key, prefixed).
// A cluster whose slot map cannot be had counts as one node.
func (ns *nodes) of(ctx context.Context, c Client, key string) *health {
	node := nodeOf(ctx, c, key)
	if node == nil {
		return &ns.def
	}
	if h, ok := ns.all.Load(node); ok {
		return h.(*health)
	}
	h, _ := ns.all.LoadOrStore(node, new(health))
	return h.(*health)
}

// nodeOf returns the client of the node serving key (a Redis key,
// prefixed) for a ClusterClient or a Ring, nil for any other client or
// when the slot map cannot be had.
func nodeOf(ctx context.Context, c Client, key string) *goredis.Client {
	var node *goredis.Client
	var err error
	switch c := c.(type) {
	case *goredis.ClusterClient:
		node, err = c.MasterForKey(ctx, key)
	case *goredis.Ring:
		node, err = c.GetShardClientForKey(key)
	}
	if err != nil {
		return nil
	}
	return node
}
