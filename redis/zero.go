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

// checkPrefix refuses braces in a prefix: Redis Cluster hashes the first
// braced part of a key, which must be the key's own, {key}. A braced part
// in the prefix would be hashed instead, putting every key in one slot; a
// lone brace would shift the part hashed.
func checkPrefix(prefix string) error {
	if strings.ContainsAny(prefix, "{}") {
		return paramError("prefix", prefix, nil, nil,
			"braces in the prefix would change the keys' hash tag (a braced part would put every key in one cluster slot)")
	}
	return nil
}
