package redis

import (
	"errors"

	goredis "github.com/redis/go-redis/v9"
)

// ErrZeroValue is what a Limiter or TwoTier that no constructor made (a
// zero value, or a nil pointer) returns with every decision, denying.
var ErrZeroValue = errors.New("redis: a limiter not made by NewGCRA, NewWindow or NewTwoTier; it denies")

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
var zeroResult = Result{RetryAfter: Never}
