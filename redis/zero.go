package redis

import (
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// errZeroValue is what a Limiter or TwoTier that no constructor made (a
// zero value, or a nil pointer) returns with every decision, denying: it
// is ErrClosed for errors.Is, as such a limiter is never open.
var errZeroValue error = zeroError{}

type zeroError struct{}

func (zeroError) Error() string {
	return "redis: a limiter not made by NewGCRA, NewWindow or NewTwoTier; it denies"
}

func (zeroError) Is(target error) bool { return target == ErrClosed }

// checkClient refuses a nil client, also a nil pointer of go-redis's
// client types in the interface.
func checkClient(c Client) error {
	nilPtr := false
	switch v := c.(type) {
	case nil:
		nilPtr = true
	case *goredis.Client:
		nilPtr = v == nil
	case *goredis.ClusterClient:
		nilPtr = v == nil
	case *goredis.Ring:
		nilPtr = v == nil
	}
	if nilPtr {
		return paramError("client", c, nil, nil, "a go-redis client (Client, ClusterClient or Ring) is needed")
	}
	return nil
}

// zeroResult is the decision of a limiter no constructor made.
var zeroResult = result{RetryAfter: never}

// checkPrefix refuses braces in a prefix: Redis Cluster would hash the
// first braced part of every key, the prefix's, and put all in one slot.
func checkPrefix(prefix string) error {
	if strings.ContainsAny(prefix, "{}") {
		return paramError("prefix", prefix, nil, nil,
			"braces would make the prefix the hash tag of every key, all in one cluster slot")
	}
	return nil
}
