package redis

import (
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/redis/internal/redistest"
)

// TestCluster runs keys spread over a real three-master Redis Cluster and
// moves one key's slot to another master while deciding on it: the client
// follows ASK and MOVED, the script is loaded on the new node after its
// NOSCRIPT, and every decision and state still matches package gcra's Step.
func TestCluster(t *testing.T) {
	longTest(t)
	cl := redistest.StartCluster(t, 3, 0)
	c := cl.Client(t)
	const events, burst = 5, 3
	l, err := NewGCRA(c, "cl:", events, time.Second, burst, WithGrace(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := newGoGCRA(events, time.Second, burst)
	now := time.Now().UnixNano()
	tats := map[string]uint64{}
	step := func(key string, n int64) {
		t.Helper()
		next, want, _ := stepGoGCRA(ref, tats[key], now, n)
		got, err := l.allowNAt(bg, key, now, n)
		if err != nil || got != want {
			t.Fatalf("key %s at %d: %+v %v, want %+v", key, now, got, err, want)
		}
		tats[key] = next
	}
	// Keys on every master.
	nodes := map[string]bool{}
	for i := range 30 {
		key := "user" + strconv.Itoa(i)
		step(key, 1)
		m, err := c.MasterForKey(bg, l.keyOf(key))
		if err != nil {
			t.Fatal(err)
		}
		nodes[m.Options().Addr] = true
	}
	if len(nodes) != 3 {
		t.Fatalf("30 keys on %d masters, want 3", len(nodes))
	}

	// Move the slot of "user0" from its master to another while deciding.
	key := "user0"
	slot := int(c.ClusterKeySlot(bg, l.keyOf(key)).Val())
	src, dst := nodeFor(t, cl, c, l.keyOf(key))
	srcID, _ := src.Do("CLUSTER", "MYID")
	dstID, _ := dst.Do("CLUSTER", "MYID")
	s := strconv.Itoa(slot)
	mustDo(t, dst, "CLUSTER", "SETSLOT", s, "IMPORTING", srcID)
	now += 50e6
	step(key, 1) // still on the source
	mustDo(t, src, "CLUSTER", "SETSLOT", s, "MIGRATING", dstID)
	now += 50e6
	step(key, 1) // the key is still on the source
	host, port, _ := strings.Cut(dst.Addr, ":")
	mustDo(t, src, "MIGRATE", host, port, "", "0", "5000", "KEYS", l.keyOf(key))
	now += 50e6
	step(key, 1) // ASK: on the destination, whose first EVALSHA finds NOSCRIPT
	for _, n := range cl.Nodes {
		mustDo(t, n, "CLUSTER", "SETSLOT", s, "NODE", dstID)
	}
	for range 10 {
		now += 150e6
		step(key, 1) // MOVED, then the new owner directly
	}
	if a, _ := dst.Do("EXISTS", l.keyOf(key)); a != "1" {
		t.Fatalf("the key is not on its new master %s", dst.Addr)
	}

	// A two-tier limiter on the cluster: keys on every master.
	tt, err := NewTwoTier(c, "cltt:", 100, time.Second, 50, WithBatch(10), WithLease(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if ok, err := tt.Allow(bg, "user"+strconv.Itoa(i)); err != nil || !ok {
			t.Fatalf("two-tier on the cluster: %v %v", ok, err)
		}
	}
}

func mustDo(t *testing.T, s *redistest.Server, args ...string) {
	t.Helper()
	if _, err := s.Do(args...); err != nil {
		t.Fatalf("%s: %v: %v", s.Addr, args, err)
	}
}

// nodeFor returns the master holding key and another master.
func nodeFor(t *testing.T, cl *redistest.Cluster, c *goredis.ClusterClient, key string) (src, dst *redistest.Server) {
	m, err := c.MasterForKey(bg, key)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range cl.Nodes[:3] {
		if n.Addr == m.Options().Addr {
			src = n
		} else if dst == nil {
			dst = n
		}
	}
	if src == nil {
		t.Fatalf("no node %s", m.Options().Addr)
	}
	return src, dst
}
