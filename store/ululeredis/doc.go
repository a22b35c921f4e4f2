// Package ululeredis is a github.com/ulule/limiter/v3 Store in Redis on
// cellrate's redis module: one limit for the fleet, keep your middleware,
// change the store. Where you had
//
//	store, err := redisstore.NewStoreWithOptions(client, limiter.StoreOptions{Prefix: "limiter"})
//
// write
//
//	store, err := ululeredis.New(client, ululeredis.Options{Prefix: "limiter"})
//
// and pass it to limiter.New with your Rate as before. See the Example.
//
// Each Rate is the redis module's GCRA (limit per period, a burst of
// limit): one round trip a decision, integer rules on the Redis server's
// clock, exact across every process sharing the Redis, Redis Cluster
// included. ulule's Redis store counts in a fixed window opened by a
// key's first request and expired by Redis, so a key may take 2*Limit
// within a moment across the expiry; the first Limit requests of a key are
// decided the same by both.
//
// The calls map as in package github.com/cellrate/cellrate/store/ulule
// (Get is Increment of 1; Increment takes all or nothing; Peek reads;
// Reset removes the key's state), with the same differences: a refused
// request is not counted, Peek is Reached when no unit remains, and each
// Rate keeps its own keys. An error from Redis is returned (the limiter
// fails closed; ulule's middleware answers 500).
package ululeredis
